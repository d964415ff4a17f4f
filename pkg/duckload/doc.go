// Package duckload writes copybin batches into DuckDB: CreateTable makes the
// table with the exact types of copybin.DuckDBType, AppenderSink appends
// through DuckDB's appender (one data chunk at a time, values written straight
// into the chunk's vectors), and ParquetSink plus LoadParquet go through a
// Parquet file instead.
package duckload
