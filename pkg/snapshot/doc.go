// Package snapshot copies PostgreSQL tables into a DuckDB database file as
// one consistent snapshot, read by parallel workers, and verifies the copy.
//
// A coordinator transaction exports a REPEATABLE READ snapshot
// (pg_export_snapshot) and records the WAL position; every reader imports
// that snapshot, so all tables and all ctid page ranges are read at the same
// point in time. Readers stream COPY BINARY into the copybin decoder; batches
// flow through bounded channels to writers (DuckDB appenders or Parquet
// files). The result is written to a temporary file next to the target and
// renamed over it only when complete, so a failed or cancelled run leaves the
// previous copy untouched. See docs/qpanalytics-snapshot.md.
package snapshot
