// Package duckdialect translates PostgreSQL-dialect queries into DuckDB SQL
// that returns PostgreSQL's answers, for qpanalytics, which serves
// analytical queries from a DuckDB copy of PostgreSQL tables.
//
// Translate parses a statement with PostgreSQL's own parser (pg_query_go),
// walks the tree, rewrites the constructs whose DuckDB meaning differs
// (regular-expression operators, intervals, substring, division by zero,
// LIKE's escape character, unqualified numeric casts, column names, ...)
// and deparses it. The walk is an allowlist: a node type, operator,
// function or type that is not known to behave the same in both engines is
// refused with an *UnsupportedError, never passed through and never
// answered differently. SessionSQL lists the DuckDB settings every
// connection needs for the rest (integer division, NULL ordering, time
// zone). docs/qpanalytics-dialect.md lists what is translated and why.
package duckdialect
