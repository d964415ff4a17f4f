module github.com/qpkit/qpkit/tools/mcpg

go 1.26.0

require (
	github.com/alecthomas/kong v1.17.0
	github.com/pganalyze/pg_query_go/v6 v6.2.5
	github.com/qpkit/qpkit/pkg v0.0.0
)

require (
	github.com/hashicorp/golang-lru/v2 v2.0.7 // indirect
	google.golang.org/protobuf v1.33.0 // indirect
)

replace github.com/qpkit/qpkit/pkg => ../../pkg
