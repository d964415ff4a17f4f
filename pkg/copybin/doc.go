// Package copybin decodes PostgreSQL's COPY ... TO STDOUT (FORMAT binary)
// stream into reusable columnar batches, so that a table can be copied into a
// columnar store without boxing each value in an interface.
//
// The decoder understands the common built-in types by hand (see Kind).
// Rarer built-in types (inet, geometry, bit strings, ranges, tsvector, ...,
// see rare.go) are decoded per value with pgx's pgtype, or a small decoder
// where pgtype has none, and stored as the text PostgreSQL's output function
// prints for them; money, xid8 and timetz get their exact DuckDB types. Other
// types (composites, extension types) are refused with an error that names
// the column; a column can be read as text instead by selecting it with a
// ::text cast and setting Column.AsText. DuckDBType gives the exact DuckDB
// type for a column and refuses types that DuckDB cannot hold without loss.
// The mapping and its edge cases are described in docs/qpanalytics-types.md.
package copybin
