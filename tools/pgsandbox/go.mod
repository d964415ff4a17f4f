module github.com/qpkit/qpkit/tools/pgsandbox

go 1.26.0

require github.com/qpkit/qpkit/pkg v0.0.0

require github.com/alecthomas/kong v1.17.0

replace github.com/qpkit/qpkit/pkg => ../../pkg
