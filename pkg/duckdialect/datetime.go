// to_char, to_date and to_timestamp.

package duckdialect

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

func toChar(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	return nil, unsupported("function to_char")
}

func toDate(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	return nil, unsupported("function to_date")
}

func toTimestamp(fc *pg_query.FuncCall) (*pg_query.Node, error) {
	return nil, unsupported("function to_timestamp")
}
