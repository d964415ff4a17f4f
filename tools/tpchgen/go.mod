module github.com/qpkit/qpkit/tools/tpchgen

go 1.26.0

require (
	github.com/alecthomas/kong v1.17.0 // indirect
	github.com/qpkit/qpkit/pkg v0.0.0
	golang.org/x/term v0.48.0
)

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace github.com/qpkit/qpkit/pkg => ../../pkg
