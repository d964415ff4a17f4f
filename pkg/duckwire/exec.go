// Execution: preparing a statement on DuckDB, refusing non-queries, and the result sets rows are read from.

package duckwire

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"strconv"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// column is one result column as described to the client.
type column struct {
	name string
	typ  *pgType
}

// resultSet is rows to send: DuckDB's or a locally computed answer.
type resultSet interface {
	columns() []column
	// next fills dst with the next row; io.EOF after the last.
	next(dst []driver.Value) error
	close()
}

// duckStmt is a prepared DuckDB statement and, when its SQL was wrapped
// to read JSON columns as text, the columns to describe instead of the
// wrapper's.
type duckStmt struct {
	*duckdb.Stmt
	cols []column
}

// prepareDuck prepares one DuckDB statement and refuses anything DuckDB
// does not classify as a query. A query with JSON columns is prepared
// again inside a wrapper that casts them to VARCHAR: the driver would
// decode JSON into Go maps (keys re-sorted, spacing lost), while the text
// DuckDB holds is what PostgreSQL would print.
func (ss *session) prepareDuck(sql string) (*duckStmt, error) {
	st, err := ss.prepareOne(sql)
	if err != nil {
		return nil, err
	}
	cols := statementColumns(st)
	wrapped, ok := jsonAsText(sql, cols)
	if !ok {
		return &duckStmt{Stmt: st}, nil
	}
	wst, err := ss.prepareOne(wrapped)
	if err != nil {
		return &duckStmt{Stmt: st}, nil // keep the decoded form
	}
	st.Close()
	return &duckStmt{Stmt: wst, cols: cols}, nil
}

// jsonAsText wraps sql to cast its top-level JSON columns to VARCHAR, the
// columns renamed positionally (names may repeat) and restored in the
// description.
func jsonAsText(sql string, cols []column) (string, bool) {
	has := false
	for _, c := range cols {
		has = has || c.typ == tJSON
	}
	if !has {
		return "", false
	}
	var sel, names strings.Builder
	for i, c := range cols {
		if i > 0 {
			sel.WriteString(", ")
			names.WriteString(", ")
		}
		name := "c" + strconv.Itoa(i)
		names.WriteString(name)
		if c.typ == tJSON {
			sel.WriteString("CAST(" + name + " AS VARCHAR)")
		} else {
			sel.WriteString(name)
		}
	}
	return "SELECT " + sel.String() + " FROM (" + strings.TrimRight(strings.TrimSpace(sql), ";") + "\n) AS _qp(" + names.String() + ")", true
}

func (ss *session) prepareOne(sql string) (*duckdb.Stmt, error) {
	ds, err := ss.duck.Prepare(sql)
	if err != nil {
		var de *duckdb.Error
		if !errors.As(err, &de) {
			return nil, errorf(codeSyntax, "qpanalytics runs one statement at a time: "+err.Error())
		}
		return nil, err
	}
	st := ds.(*duckdb.Stmt)
	typ, err := st.StatementType()
	if err != nil {
		st.Close()
		return nil, err
	}
	switch typ {
	case duckdb.STATEMENT_TYPE_SELECT, duckdb.STATEMENT_TYPE_EXPLAIN:
		return st, nil
	case duckdb.STATEMENT_TYPE_INSERT, duckdb.STATEMENT_TYPE_UPDATE, duckdb.STATEMENT_TYPE_DELETE,
		duckdb.STATEMENT_TYPE_CREATE, duckdb.STATEMENT_TYPE_DROP, duckdb.STATEMENT_TYPE_ALTER,
		duckdb.STATEMENT_TYPE_COPY, duckdb.STATEMENT_TYPE_CREATE_FUNC, duckdb.STATEMENT_TYPE_ATTACH,
		duckdb.STATEMENT_TYPE_DETACH, duckdb.STATEMENT_TYPE_VACUUM, duckdb.STATEMENT_TYPE_ANALYZE:
		st.Close()
		return nil, errorf(codeReadOnly, "cannot execute this statement in a read-only transaction: qpanalytics only runs queries")
	}
	st.Close()
	return nil, errorf(codeNotSupported, "qpanalytics only runs queries (SELECT, EXPLAIN)")
}

// statementColumns describes a prepared statement's result without
// running it; a column DuckDB cannot type before binding is text.
func statementColumns(st *duckdb.Stmt) []column {
	n, err := st.ColumnCount()
	if err != nil {
		return nil
	}
	cols := make([]column, n)
	for i := range cols {
		name, _ := st.ColumnName(i)
		ti, err := st.ColumnTypeInfo(i)
		if err != nil {
			cols[i] = column{name: name, typ: tText}
			continue
		}
		cols[i] = column{name: name, typ: typeOfInfo(ti)}
	}
	return cols
}

// describe is the statement's result columns.
func (d *duckStmt) describe() []column {
	if d.cols != nil {
		return d.cols
	}
	return statementColumns(d.Stmt)
}

// runDuck executes st with args under a cancelable context and returns its
// (materialized) rows.
func (ss *session) runDuck(st *duckStmt, args []driver.NamedValue) (resultSet, error) {
	ctx, end := ss.startQuery()
	defer end()
	rows, err := st.QueryContext(ctx, args)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	r := newDuckRows(rows)
	if st.cols != nil && len(st.cols) == len(r.cols) {
		r.cols = st.cols
	}
	return r, nil
}

type duckRows struct {
	rows driver.Rows
	cols []column
}

func newDuckRows(rows driver.Rows) *duckRows {
	names := rows.Columns()
	cols := make([]column, len(names))
	tn, _ := rows.(driver.RowsColumnTypeDatabaseTypeName)
	for i, n := range names {
		cols[i] = column{name: n, typ: tText}
		if tn != nil {
			cols[i].typ = typeOfName(tn.ColumnTypeDatabaseTypeName(i))
		}
	}
	return &duckRows{rows: rows, cols: cols}
}

func (r *duckRows) columns() []column             { return r.cols }
func (r *duckRows) next(dst []driver.Value) error { return r.rows.Next(dst) }
func (r *duckRows) close()                        { r.rows.Close() }

// localRows is an answer computed by the server (SHOW, catalog lookups).
type localRows struct {
	cols []column
	rows [][]driver.Value
	i    int
}

func (r *localRows) columns() []column { return r.cols }
func (r *localRows) next(dst []driver.Value) error {
	if r.i >= len(r.rows) {
		return io.EOF
	}
	copy(dst, r.rows[r.i])
	r.i++
	return nil
}
func (r *localRows) close() {}

// textRows builds a local answer of text columns.
func textRows(names []string, rows ...[]string) *localRows {
	r := &localRows{cols: make([]column, len(names))}
	for i, n := range names {
		r.cols[i] = column{name: n, typ: tText}
	}
	for _, row := range rows {
		vals := make([]driver.Value, len(row))
		for i, v := range row {
			vals[i] = v
		}
		r.rows = append(r.rows, vals)
	}
	return r
}
