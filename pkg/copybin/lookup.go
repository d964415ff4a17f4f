// Reading a table's columns from the PostgreSQL catalog.

package copybin

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Querier is what LookupColumns needs: a *pgx.Conn, pgx.Tx or pool.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// columnsSQL lists a relation's live columns in order. A domain is replaced
// by its base type (COPY sends the base type's binary form); an enum is sent
// as its label's text, so it is read as text.
const columnsSQL = `
SELECT a.attname,
       CASE WHEN t.typtype = 'd' THEN t.typbasetype
            WHEN t.typtype = 'e' THEN 'text'::regtype::oid
            ELSE a.atttypid END,
       CASE WHEN t.typtype = 'd' THEN t.typtypmod ELSE a.atttypmod END,
       format_type(a.atttypid, a.atttypmod),
       a.attnotnull
FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum`

// LookupColumns returns the columns of relation (a name as regclass accepts
// it, e.g. `public.lineitem` or `"Mixed"."Case"`), in attribute order.
func LookupColumns(ctx context.Context, q Querier, relation string) ([]Column, error) {
	rows, err := q.Query(ctx, columnsSQL, relation)
	if err != nil {
		return nil, fmt.Errorf("look up columns of %s: %w", relation, err)
	}
	defer rows.Close()
	var cols []Column
	for rows.Next() {
		var c Column
		if err := rows.Scan(&c.Name, &c.TypeOID, &c.TypMod, &c.Type, &c.NotNull); err != nil {
			return nil, fmt.Errorf("look up columns of %s: %w", relation, err)
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("look up columns of %s: %w", relation, err)
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("look up columns of %s: no columns", relation)
	}
	return cols, nil
}
