module github.com/qpkit/qpkit/tools/perfstat

go 1.26.0

require github.com/qpkit/qpkit/pkg v0.0.0

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/alecthomas/kong v1.17.0 // indirect
)

replace github.com/qpkit/qpkit/pkg => ../../pkg
