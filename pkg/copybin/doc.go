// Package copybin decodes PostgreSQL's COPY ... TO STDOUT (FORMAT binary)
// stream into reusable columnar batches, so that a table can be copied into a
// columnar store without boxing each value in an interface.
//
// The decoder understands the common built-in types by hand (see Kind) and
// refuses everything else with an error that names the column; a column can
// be read as text instead by selecting it with a ::text cast and setting
// Column.AsText. DuckDBType gives the exact DuckDB type for a column and
// refuses types that DuckDB cannot hold without loss. The mapping and its edge
// cases are described in docs/qpanalytics-types.md.
package copybin
