// Package documentation: what the DuckDB wire-protocol server answers and what it refuses.

// Package duckwire serves a DuckDB database file over the PostgreSQL
// frontend/backend protocol 3.0, read-only, so psql, pgx and other
// PostgreSQL drivers can run analytical queries against the columnar copy
// qpanalytics makes of PostgreSQL tables.
//
// Startup and authentication are pkg/pgwire's. Each client session gets its
// own DuckDB connection (so SET and temporary state never leak between
// sessions) on one database opened with access_mode=read_only and external
// access disabled. Queries go through a dialect hook (PostgreSQL SQL to
// DuckDB SQL), are refused unless DuckDB classifies them as SELECT or
// EXPLAIN, and their results are encoded straight into a reused buffer, in
// text or binary format, with the PostgreSQL type OID of each DuckDB type.
//
// Session chatter (SET, SHOW, BEGIN/COMMIT/ROLLBACK, DISCARD, version(),
// current_setting) is answered locally, as are the catalog queries psql
// sends for \dt and \d, which DuckDB's pg_catalog views cannot answer.
// See docs/qpanalytics-server.md.
package duckwire
