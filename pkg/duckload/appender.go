// AppenderSink: batches into a table through DuckDB's appender.

package duckload

import (
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/duckdb/duckdb-go/v2/mapping"
	"github.com/qpkit/qpkit/pkg/copybin"
)

// AppenderSink appends batches to one DuckDB table through DuckDB's
// appender, filling its data chunks column by column. Each sink needs its own
// connection; several sinks on different connections may append to the same
// table at once. The connection must stay open (and otherwise unused) until
// Close. Not safe for concurrent use.
type AppenderSink struct {
	name   string
	app    mapping.Appender
	chunk  mapping.DataChunk
	types  []mapping.LogicalType
	cols   []columnWriter
	arena  *strArena
	rows   int // rows in the current chunk
	cap    int
	total  int64
	closed bool
}

// NewAppenderSink opens DuckDB's appender on schema.table (schema "" is the
// default schema) over conn, the driver connection of a duckdb-go sql.Conn
// (from sql.Conn.Raw). The table's columns must be those of CreateTable for
// cols, in the same order.
func NewAppenderSink(conn driver.Conn, schema, table string, cols []copybin.Column) (*AppenderSink, error) {
	name := qualified(schema, table)
	h, err := rawConnection(conn)
	if err != nil {
		return nil, fmt.Errorf("appender on %s: %w", name, err)
	}
	s := &AppenderSink{name: name, cap: int(mapping.VectorSize())}
	if mapping.AppenderCreateExt(h, "", schema, table, &s.app) == mapping.StateError {
		msg := mapping.AppenderError(s.app)
		mapping.AppenderDestroy(&s.app)
		return nil, fmt.Errorf("appender on %s: %s", name, msg)
	}
	n := int(mapping.AppenderColumnCount(s.app))
	if n != len(cols) {
		s.destroy()
		return nil, fmt.Errorf("appender on %s: table has %d columns, the stream %d", name, n, len(cols))
	}
	for i, c := range cols {
		lt := mapping.AppenderColumnType(s.app, mapping.IdxT(i))
		s.types = append(s.types, lt)
		w, err := newColumnWriter(c, lt)
		if err != nil {
			s.destroy()
			return nil, fmt.Errorf("appender on %s: %w", name, err)
		}
		s.cols = append(s.cols, w)
	}
	if s.arena, err = newStrArena(); err != nil {
		s.destroy()
		return nil, fmt.Errorf("appender on %s: %w", name, err)
	}
	s.chunk = mapping.CreateDataChunk(s.types)
	return s, nil
}

// Write appends the batch's rows. The batch may be reused once Write returns.
// The appender commits on its own every so many rows and at Close, so a
// failed load leaves rows behind: drop the table rather than reuse it.
func (s *AppenderSink) Write(b *copybin.Batch) error {
	if s.closed {
		return fmt.Errorf("appender on %s: write after close", s.name)
	}
	if len(b.Cols) != len(s.cols) {
		return fmt.Errorf("appender on %s: batch has %d columns, want %d", s.name, len(b.Cols), len(s.cols))
	}
	for from := 0; from < b.Len; {
		n := min(s.cap-s.rows, b.Len-from)
		for i := range s.cols {
			vec := mapping.DataChunkGetVector(s.chunk, mapping.IdxT(i))
			if err := s.cols[i].write(vec, s.rows, &b.Cols[i], from, n, s.arena); err != nil {
				return fmt.Errorf("appender on %s: column %s: %w", s.name, s.cols[i].name, err)
			}
		}
		s.rows += n
		from += n
		if s.rows == s.cap {
			if err := s.appendChunk(); err != nil {
				return err
			}
		}
	}
	s.total += int64(b.Len)
	return nil
}

// Rows is the number of rows written so far.
func (s *AppenderSink) Rows() int64 { return s.total }

func (s *AppenderSink) appendChunk() error {
	if s.rows == 0 {
		return nil
	}
	mapping.DataChunkSetSize(s.chunk, mapping.IdxT(s.rows))
	if mapping.AppendDataChunk(s.app, s.chunk) == mapping.StateError {
		return fmt.Errorf("appender on %s: append chunk: %s", s.name, mapping.AppenderError(s.app))
	}
	mapping.DataChunkReset(s.chunk)
	s.arena.reset() // the appender has copied the chunk's strings
	s.rows = 0
	return nil
}

// Close appends what is buffered, flushes the appender (which commits the
// rows) and frees it. It is safe to call twice.
func (s *AppenderSink) Close() error {
	if s.closed {
		return nil
	}
	err := s.appendChunk()
	if err == nil && mapping.AppenderFlush(s.app) == mapping.StateError {
		err = fmt.Errorf("appender on %s: flush: %s", s.name, mapping.AppenderError(s.app))
	}
	if err != nil {
		mapping.AppenderClear(s.app)
	}
	if s.destroy() && err == nil {
		err = errors.New("appender on " + s.name + ": close failed")
	}
	return err
}

// destroy frees everything; it reports whether destroying the appender failed.
func (s *AppenderSink) destroy() bool {
	s.closed = true
	if s.chunk.Ptr != nil {
		mapping.DestroyDataChunk(&s.chunk)
	}
	for i := range s.types {
		mapping.DestroyLogicalType(&s.types[i])
	}
	s.types = nil
	failed := mapping.AppenderDestroy(&s.app) == mapping.StateError
	s.arena.free()
	return failed
}
