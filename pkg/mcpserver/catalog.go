// The catalog tools: constant SQL run through the executor, rendered as
// compact text.

package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/qpkit/qpkit/pkg/pgexec"
)

// systemSchemas is the condition that leaves out PostgreSQL's own schemas.
const systemSchemas = `n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp%'`

// readable keeps to what the role may read, as information_schema does:
// a listing of relations every query on which fails only misleads an
// agent. A relation counts if the role may select from it or from one
// of its columns, in a schema it may use.
const readable = `pg_catalog.has_schema_privilege(n.oid, 'USAGE')
  AND (pg_catalog.has_table_privilege(c.oid, 'SELECT') OR pg_catalog.has_any_column_privilege(c.oid, 'SELECT'))`

const listSchemasSQL = `SELECT n.nspname, obj_description(n.oid, 'pg_namespace')
FROM pg_catalog.pg_namespace n
WHERE ` + systemSchemas + ` AND pg_catalog.has_schema_privilege(n.oid, 'USAGE')
ORDER BY 1`

// $1 schema (NULL: all non-system ones), $2 ILIKE pattern (NULL: any).
// Names are quoted as SQL needs them (quote_ident), so that each can be
// given back to describe_table or written in a query as it is.
const listTablesSQL = `SELECT pg_catalog.quote_ident(n.nspname) || '.' || pg_catalog.quote_ident(c.relname),
  c.relkind::text, c.reltuples::bigint, obj_description(c.oid, 'pg_class')
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND (($1::text IS NULL AND ` + systemSchemas + `) OR n.nspname = $1::text)
  AND ($2::text IS NULL OR c.relname ILIKE $2::text)
  AND ` + readable + `
ORDER BY n.nspname, c.relname`

// The describe_table queries; $1 is the name as the agent wrote it.
const (
	// The relation, with a partitioned table's key, a partition's parent
	// and bounds, and a partitioned table's partitions (the first
	// maxPartitions, and how many there are).
	describeRelSQL = `SELECT c.oid::regclass::text, c.relkind::text, c.reltuples::bigint,
  obj_description(c.oid, 'pg_class'),
  CASE WHEN c.relkind = 'p' THEN pg_get_partkeydef(c.oid) END,
  (SELECT i.inhparent::regclass::text FROM pg_catalog.pg_inherits i WHERE c.relispartition AND i.inhrelid = c.oid),
  CASE WHEN c.relispartition THEN pg_get_expr(c.relpartbound, c.oid) END,
  (SELECT string_agg(p.r, ', ') FROM (SELECT i.inhrelid::regclass::text AS r FROM pg_catalog.pg_inherits i
    WHERE c.relkind = 'p' AND i.inhparent = c.oid ORDER BY 1 LIMIT ` + maxPartitionsText + `) p),
  (SELECT count(*) FROM pg_catalog.pg_inherits i WHERE c.relkind = 'p' AND i.inhparent = c.oid)
FROM pg_catalog.pg_class c WHERE c.oid = to_regclass($1::text)`

	describeColumnsSQL = `SELECT pg_catalog.quote_ident(a.attname), format_type(a.atttypid, a.atttypmod), a.attnotnull,
  pg_get_expr(d.adbin, d.adrelid), a.attidentity::text, a.attgenerated::text,
  col_description(a.attrelid, a.attnum)
FROM pg_catalog.pg_attribute a
LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = to_regclass($1::text) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum`

	describeConstraintsSQL = `SELECT pg_catalog.quote_ident(k.conname), pg_get_constraintdef(k.oid, true)
FROM pg_catalog.pg_constraint k
WHERE k.conrelid = to_regclass($1::text)
ORDER BY CASE k.contype WHEN 'p' THEN 0 WHEN 'u' THEN 1 WHEN 'f' THEN 2 ELSE 3 END, k.conname`

	// Indexes that back one of the table's own constraints are shown as
	// the constraint (a foreign key elsewhere names this table's index as
	// its conindid too: that does not hide it).
	describeIndexesSQL = `SELECT pg_get_indexdef(i.indexrelid)
FROM pg_catalog.pg_index i
WHERE i.indrelid = to_regclass($1::text)
  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint k
    WHERE k.conindid = i.indexrelid AND k.conrelid = i.indrelid AND k.contype IN ('p', 'u', 'x'))
ORDER BY i.indexrelid::regclass::text`
)

// maxPartitions is how many partitions describe_table names.
const (
	maxPartitions     = 50
	maxPartitionsText = "50"
)

var kindNames = map[string]string{
	"r": "table", "p": "partitioned table", "v": "view", "m": "materialized view", "f": "foreign table",
	"i": "index", "S": "sequence", "c": "composite type", "I": "partitioned index", "t": "TOAST table",
}

// query runs a catalog statement and returns its rows; numbers stay
// json.Number.
func (h *handler) query(ctx context.Context, sql string, params ...any) (rows [][]any, truncated bool, err error) {
	res, err := runResilient(ctx, func() (pgexec.Result, error) { return h.catalog.Run(ctx, sql, params, nil) })
	if err != nil {
		return nil, false, err
	}
	var doc struct {
		Rows [][]any `json:"rows"`
	}
	dec := json.NewDecoder(bytes.NewReader(res.JSON))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, false, fmt.Errorf("mcpserver: decode catalog result: %w", err)
	}
	return doc.Rows, res.Truncated, nil
}

// moreThan tells whether the count n (a result cell's text) exceeds max.
func moreThan(n string, max int) bool {
	v, err := strconv.Atoi(n)
	return err == nil && v > max
}

// str is a result cell as text; NULL is "".
func str(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

// estimate renders reltuples: -1 means never analyzed or vacuumed.
func estimate(v any) string {
	s := str(v)
	if s == "-1" || s == "" {
		return "?"
	}
	return s
}

// comment renders an optional comment on one line.
func comment(v any) string {
	s := str(v)
	if s == "" {
		return ""
	}
	return " -- " + strings.Join(strings.Fields(s), " ")
}

// truncNote says that a listing was cut (by rows or by bytes) after the
// shown ones.
func truncNote(b *strings.Builder, truncated bool, shown int) {
	if truncated {
		fmt.Fprintf(b, "(truncated: first %d shown)\n", shown)
	}
}

func (h *handler) listSchemas(ctx context.Context, req mcp.CallToolRequest, o *outcome) (*mcp.CallToolResult, error) {
	rows, truncated, err := h.query(ctx, listSchemasSQL)
	if err != nil {
		return o.fail(err), nil
	}
	o.rows = len(rows)
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(str(r[0]) + comment(r[1]) + "\n")
	}
	truncNote(&b, truncated, len(rows))
	if len(rows) == 0 {
		b.WriteString("(no schemas)\n")
	}
	return mcp.NewToolResultText(b.String()), nil
}

func (h *handler) listTables(ctx context.Context, req mcp.CallToolRequest, o *outcome) (*mcp.CallToolResult, error) {
	var schema, pattern any
	args := arguments(req)
	for key, dst := range map[string]*any{"schema": &schema, "pattern": &pattern} {
		s, _, err := optString(args, key)
		if err != nil {
			return o.bad(err.Error()), nil
		}
		if s != "" {
			*dst = s
		}
	}
	rows, truncated, err := h.query(ctx, listTablesSQL, schema, pattern)
	if err != nil {
		return o.fail(err), nil
	}
	o.rows = len(rows)
	var b strings.Builder
	b.WriteString("# name kind est_rows -- comment\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s %s %s%s\n", str(r[0]),
			strings.ReplaceAll(kindNames[str(r[1])], " ", "_"), estimate(r[2]), comment(r[3]))
	}
	truncNote(&b, truncated, len(rows))
	if len(rows) == 0 {
		b.WriteString("(no tables)\n")
	}
	return mcp.NewToolResultText(b.String()), nil
}

func (h *handler) describeTable(ctx context.Context, req mcp.CallToolRequest, o *outcome) (*mcp.CallToolResult, error) {
	name, err := req.RequireString("name")
	if err != nil {
		return o.bad(err.Error()), nil
	}
	rel, _, err := h.query(ctx, describeRelSQL, name)
	if err != nil {
		return o.fail(err), nil
	}
	if len(rel) == 0 {
		return o.bad(fmt.Sprintf("relation %q does not exist", name)), nil
	}
	cols, colsCut, err := h.query(ctx, describeColumnsSQL, name)
	if err != nil {
		return o.fail(err), nil
	}
	cons, consCut, err := h.query(ctx, describeConstraintsSQL, name)
	if err != nil {
		return o.fail(err), nil
	}
	idx, idxCut, err := h.query(ctx, describeIndexesSQL, name)
	if err != nil {
		return o.fail(err), nil
	}

	o.rows = len(cols)
	kind := kindNames[str(rel[0][1])]
	var b strings.Builder
	fmt.Fprintf(&b, "-- %s, ~%s rows%s\n", kind, estimate(rel[0][2]), comment(rel[0][3]))
	if parent := str(rel[0][5]); parent != "" {
		fmt.Fprintf(&b, "-- partition of %s %s\n", parent, str(rel[0][6]))
	}
	fmt.Fprintf(&b, "CREATE %s %s (\n", strings.ToUpper(kind), str(rel[0][0]))
	var lines []string
	for _, c := range cols {
		line := "  " + str(c[0]) + " " + str(c[1])
		if c[2] == true {
			line += " NOT NULL"
		}
		switch {
		case str(c[4]) == "a":
			line += " GENERATED ALWAYS AS IDENTITY"
		case str(c[4]) == "d":
			line += " GENERATED BY DEFAULT AS IDENTITY"
		case str(c[5]) == "s":
			line += " GENERATED ALWAYS AS (" + str(c[3]) + ") STORED"
		case c[3] != nil:
			line += " DEFAULT " + str(c[3])
		}
		lines = append(lines, line+"\x00"+comment(c[6]))
	}
	for _, c := range cons {
		lines = append(lines, "  CONSTRAINT "+str(c[0])+" "+str(c[1])+"\x00")
	}
	for i, l := range lines {
		code, note, _ := strings.Cut(l, "\x00")
		if i < len(lines)-1 {
			code += ","
		}
		b.WriteString(code + note + "\n")
	}
	if key := str(rel[0][4]); key != "" {
		b.WriteString(") PARTITION BY " + key + ";\n")
		parts, n := str(rel[0][7]), str(rel[0][8])
		switch {
		case parts == "":
			b.WriteString("-- no partitions\n")
		case !moreThan(n, maxPartitions):
			b.WriteString("-- partitions: " + parts + "\n")
		default:
			fmt.Fprintf(&b, "-- partitions: %s (the first %d of %s)\n", parts, maxPartitions, n)
		}
	} else {
		b.WriteString(");\n")
	}
	for _, r := range idx {
		b.WriteString(str(r[0]) + ";\n")
	}
	for _, cut := range []struct {
		cut  bool
		n    int
		what string
	}{{colsCut, len(cols), "columns"}, {consCut, len(cons), "constraints"}, {idxCut, len(idx), "indexes"}} {
		if cut.cut {
			fmt.Fprintf(&b, "-- (truncated: only the first %d %s shown)\n", cut.n, cut.what)
		}
	}
	return mcp.NewToolResultText(b.String()), nil
}
