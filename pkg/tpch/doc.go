// Package tpch generates the TPC-H tables byte for byte as the official
// dbgen 2.14.0 writes them, at any scale factor dbgen accepts.
//
// A Generator interprets the scale factor the way dbgen's -s does (below 1
// row counts scale by whole thousandths; above 1 only the integer part
// counts). Its WriteTable and WriteTables methods stream rows in dbgen's
// .tbl format, PostgreSQL COPY text or CSV, whole or as the K-th of N
// chunks split exactly as "dbgen -C N -S K" splits them. Generation can
// run on several goroutines: every column has its own random stream whose
// position at any row is reached by skip-ahead, so the bytes never depend
// on the number of jobs or the chunking.
//
// All comment columns are cut from dbgen's 300 MiB text pool, which is
// built once per process (in parallel, about half a second on two cores)
// and shared read-only by every Generator.
//
// RowCount, Query, SchemaSQL and ConstraintsSQL give the row counts, the
// 22 queries and the PostgreSQL schema to load the data into.
package tpch
