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
// by its base type, through domains over domains (COPY sends the base
// type's binary form), keeping the innermost type modifier given; an enum
// (or a domain over one) is sent as its label's text, so it is read as
// text. An array of enums or domains becomes text[] or the base type's
// array, and sent gives the element type the server writes into each array
// value (the enum's or domain's own OID). A money column's TypMod becomes
// that of numeric(19, s), s being the digits money has after the point in
// this session's lc_monetary, which is what money::numeric gives.
const columnsSQL = `
WITH RECURSIVE cols AS (
  SELECT a.attnum, a.attname, a.atttypid AS typ, a.atttypmod AS typmod,
         format_type(a.atttypid, a.atttypmod) AS fmt, a.attnotnull
  FROM pg_attribute a
  WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
  SELECT c.attnum, c.attname, t.typbasetype,
         CASE WHEN t.typtypmod <> -1 THEN t.typtypmod ELSE c.typmod END, c.fmt, c.attnotnull
  FROM cols c JOIN pg_type t ON t.oid = c.typ
  WHERE t.typtype = 'd'
), base AS (
  SELECT c.*, t.typtype, t.typcategory, t.typelem
  FROM cols c JOIN pg_type t ON t.oid = c.typ
  WHERE t.typtype <> 'd'
), elems AS (
  SELECT b.attnum, b.typelem AS sent, b.typelem AS typ, b.typmod
  FROM base b JOIN pg_type et ON et.oid = b.typelem
  WHERE b.typcategory = 'A' AND et.typtype IN ('d', 'e')
  UNION ALL
  SELECT e.attnum, e.sent, t.typbasetype, CASE WHEN t.typtypmod <> -1 THEN t.typtypmod ELSE e.typmod END
  FROM elems e JOIN pg_type t ON t.oid = e.typ
  WHERE t.typtype = 'd'
), res AS (
  SELECT b.attnum, b.attname, b.fmt, b.attnotnull,
         CASE WHEN b.typtype = 'e' THEN 'text'::regtype::oid
              WHEN e.attnum IS NULL THEN b.typ
              WHEN et.typtype = 'e' THEN 'text[]'::regtype::oid
              ELSE et.typarray END AS typ,
         CASE WHEN b.typtype = 'e' OR et.typtype = 'e' THEN -1
              WHEN e.attnum IS NULL THEN b.typmod
              ELSE e.typmod END AS typmod,
         coalesce(e.sent, 0) AS sent
  FROM base b
  LEFT JOIN (elems e JOIN pg_type et ON et.oid = e.typ AND et.typtype <> 'd') ON e.attnum = b.attnum
)
SELECT attname, typ,
       CASE WHEN typ IN ('money'::regtype, 'money[]'::regtype) THEN ((19 << 16) | scale(0::money::numeric)) + 4
            ELSE typmod END,
       fmt, attnotnull, sent
FROM res
ORDER BY attnum`

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
		if err := rows.Scan(&c.Name, &c.TypeOID, &c.TypMod, &c.Type, &c.NotNull, &c.ElemOID); err != nil {
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
