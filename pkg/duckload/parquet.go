// ParquetSink: batches into a Parquet file that DuckDB reads back exactly.

package duckload

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/qpkit/qpkit/pkg/copybin"
)

// parquetRowGroup matches DuckDB's row group size, so a scan parallelises
// over row groups the way it would over a native table.
const parquetRowGroup = 122880

// ParquetSink writes batches to one Parquet file. Decimals keep their
// precision and scale, timestamps are microseconds (UTC-adjusted for
// timestamptz), UUIDs carry the UUID logical type; intervals are written as
// text that DuckDB casts back exactly on load. Not safe for concurrent use.
type ParquetSink struct {
	path   string
	file   *os.File
	buf    *bufio.Writer
	fw     *pqarrow.FileWriter
	schema *arrow.Schema
	conv   []arrowColumn
	rows   int64
	closed bool
}

// NewParquetSink creates (or truncates) the file at path.
func NewParquetSink(path string, cols []copybin.Column) (*ParquetSink, error) {
	s := &ParquetSink{path: path}
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		ac, err := newArrowColumn(c)
		if err != nil {
			return nil, fmt.Errorf("parquet %s: %w", path, err)
		}
		s.conv = append(s.conv, ac)
		fields[i] = arrow.Field{Name: c.Name, Type: ac.typ, Nullable: !c.NotNull}
	}
	s.schema = arrow.NewSchema(fields, nil)
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("parquet sink: %w", err)
	}
	s.file, s.buf = f, bufio.NewWriterSize(f, 1<<20)
	props := parquet.NewWriterProperties(
		parquet.WithMaxRowGroupLength(parquetRowGroup),
		parquet.WithDictionaryDefault(false), // the file is read once; plain pages are cheaper to write
		parquet.WithCompression(compress.Codecs.Uncompressed),
		parquet.WithStoreDecimalAsInteger(true),
		parquet.WithStats(false),
	)
	s.fw, err = pqarrow.NewFileWriter(s.schema, s.buf, props, pqarrow.NewArrowWriterProperties())
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("parquet %s: %w", path, err)
	}
	return s, nil
}

// Write adds the batch's rows. The batch may be reused once Write returns.
func (s *ParquetSink) Write(b *copybin.Batch) error {
	if s.closed {
		return fmt.Errorf("parquet %s: write after close", s.path)
	}
	if len(b.Cols) != len(s.conv) {
		return fmt.Errorf("parquet %s: batch has %d columns, want %d", s.path, len(b.Cols), len(s.conv))
	}
	if b.Len == 0 {
		return nil
	}
	arrs := make([]arrow.Array, len(s.conv))
	for i := range s.conv {
		a, err := s.conv[i].array(&b.Cols[i], b.Len)
		if err != nil {
			return fmt.Errorf("parquet %s: column %s: %w", s.path, s.conv[i].name, err)
		}
		arrs[i] = a
	}
	rec := arrowRecord(s.schema, arrs, b.Len)
	defer rec.Release()
	if err := s.fw.WriteBuffered(rec); err != nil {
		return fmt.Errorf("parquet %s: %w", s.path, err)
	}
	s.rows += int64(b.Len)
	return nil
}

// Rows is the number of rows written so far.
func (s *ParquetSink) Rows() int64 { return s.rows }

// Close finishes the file (footer) and closes it; safe to call twice.
func (s *ParquetSink) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.fw.Close() // closes nothing below the bufio.Writer
	if ferr := s.buf.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	if cerr := s.file.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("parquet %s: close: %w", s.path, err)
	}
	return nil
}

// LoadParquet inserts the rows of the Parquet files into schema.table (which
// CreateTable made), matching columns by position.
func LoadParquet(ctx context.Context, db Execer, schema, table string, files []string) error {
	if len(files) == 0 {
		return nil
	}
	lits := make([]string, len(files))
	for i, f := range files {
		lits[i] = "'" + strings.ReplaceAll(f, "'", "''") + "'"
	}
	// hive_partitioning off: a directory named key=value (the scratch
	// directory beside the target file may be one) would otherwise become
	// a column, overwriting one of the same name.
	q := fmt.Sprintf("INSERT INTO %s SELECT * FROM read_parquet([%s], hive_partitioning = false)", qualified(schema, table), strings.Join(lits, ", "))
	if _, err := db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("load %d parquet files into %s: %w", len(files), qualified(schema, table), err)
	}
	return nil
}
