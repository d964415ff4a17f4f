// Package tpchload fills a PostgreSQL database or a DuckDB database with
// generated TPC-H data, so that tests and benchmarks can compare the two
// engines on the same rows without going through any copy machinery.
//
// LoadPostgres streams each table through COPY (all tables at once);
// LoadDuckDB writes each table to a temporary CSV file and reads it with
// DuckDB's read_csv, storing the types qpanalytics's copy uses: integer and
// bigint keys, DECIMAL(15,2), DATE and VARCHAR with char(n) values stripped
// of trailing spaces.
package tpchload
