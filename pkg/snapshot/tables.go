// Finding the tables to copy and their columns, before any data is read.

package snapshot

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/copybin"
)

// table is one table to copy.
type table struct {
	Schema, Name string
	OID          uint32
	Pages        int64 // heap pages when the snapshot was taken
	Cols         []copybin.Column
	// heapCopy: COPY table (cols) TO can copy it (a plain table without
	// generated columns); otherwise COPY (SELECT ...) does.
	heapCopy bool
}

// String is the table's qualified name as the user would write it.
func (t *table) String() string { return t.Schema + "." + t.Name }

// pgIdent is the table's quoted name for PostgreSQL.
func (t *table) pgIdent() string { return pgx.Identifier{t.Schema, t.Name}.Sanitize() }

// splitName splits "schema.table" at the first dot; a bare name is in
// public. Names are matched exactly (no case folding, no quotes).
func splitName(name string) (schema, rel string) {
	if i := strings.IndexByte(name, '.'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return "public", name
}

// describeTables looks every name up and checks that every column has an
// exact DuckDB type, so that a missing table or an unsupported type fails
// the run before a row is read. With asText, a column without one is copied
// as its text form instead. Duplicate names are an error too.
func describeTables(ctx context.Context, conn *pgx.Conn, names []string, asText bool) ([]*table, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("no tables to copy")
	}
	seen := map[string]bool{}
	var out []*table
	for _, name := range names {
		t, err := describeTable(ctx, conn, name)
		if err != nil {
			return nil, err
		}
		if seen[t.String()] {
			return nil, fmt.Errorf("table %s named twice", t)
		}
		seen[t.String()] = true
		for i := range t.Cols {
			c := &t.Cols[i]
			if _, err := copybin.DuckDBType(*c); err != nil {
				if !asText {
					return nil, fmt.Errorf("table %s: %w", t, err)
				}
				c.AsText = true
			}
		}
		out = append(out, t)
	}
	return out, nil
}

const tableQuery = `
SELECT c.oid, c.relkind::text,
       pg_relation_size(c.oid) / current_setting('block_size')::bigint,
       EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0
               AND NOT a.attisdropped AND a.attgenerated <> '')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = $2`

// describeTable reads one table's size and columns in attnum order.
func describeTable(ctx context.Context, conn *pgx.Conn, name string) (*table, error) {
	t := &table{}
	t.Schema, t.Name = splitName(name)
	var kind string
	var generated bool
	err := conn.QueryRow(ctx, tableQuery, t.Schema, t.Name).Scan(&t.OID, &kind, &t.Pages, &generated)
	if err == pgx.ErrNoRows {
		return nil, fmt.Errorf("table %s does not exist", t)
	}
	if err != nil {
		return nil, fmt.Errorf("look up table %s: %w", t, err)
	}
	if kind != "r" && kind != "m" {
		return nil, fmt.Errorf("%s is not a plain table or materialized view (relkind %q)", t, kind)
	}
	// PostgreSQL's COPY TO refuses a materialized view and a generated
	// column in its column list.
	t.heapCopy = kind == "r" && !generated
	if t.Cols, err = copybin.LookupColumns(ctx, conn, t.pgIdent()); err != nil {
		return nil, fmt.Errorf("table %s: %w", t, err)
	}
	return t, nil
}
