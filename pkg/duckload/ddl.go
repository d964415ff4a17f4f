// CREATE TABLE from copybin columns.

package duckload

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/qpkit/qpkit/pkg/copybin"
)

// Execer is *sql.DB, *sql.Conn or *sql.Tx.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// CreateTableSQL is the DDL CreateTable runs; schema may be empty.
func CreateTableSQL(schema, table string, cols []copybin.Column) (string, error) {
	if len(cols) == 0 {
		return "", fmt.Errorf("create table %s: no columns", table)
	}
	var sb strings.Builder
	sb.WriteString("CREATE TABLE ")
	sb.WriteString(qualified(schema, table))
	sb.WriteString(" (")
	for i, c := range cols {
		t, err := copybin.DuckDBType(c)
		if err != nil {
			return "", fmt.Errorf("create table %s: %w", table, err)
		}
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(copybin.QuoteIdent(c.Name))
		sb.WriteString(" ")
		sb.WriteString(t)
		if c.NotNull {
			sb.WriteString(" NOT NULL")
		}
	}
	sb.WriteString(")")
	return sb.String(), nil
}

// CreateTable creates schema.table (schema may be empty for the default
// one) with the DuckDB types of the columns. It fails when the table exists
// or a column has no exact DuckDB type.
func CreateTable(ctx context.Context, db Execer, schema, table string, cols []copybin.Column) error {
	ddl, err := CreateTableSQL(schema, table, cols)
	if err != nil {
		return err
	}
	if schema != "" {
		if _, err := db.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS "+copybin.QuoteIdent(schema)); err != nil {
			return fmt.Errorf("create schema %s: %w", schema, err)
		}
	}
	if _, err := db.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("create table %s: %w", qualified(schema, table), err)
	}
	return nil
}

func qualified(schema, table string) string {
	if schema == "" {
		return copybin.QuoteIdent(table)
	}
	return copybin.QuoteIdent(schema) + "." + copybin.QuoteIdent(table)
}
