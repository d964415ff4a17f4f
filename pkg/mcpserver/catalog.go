// The catalog tools: constant SQL run through the executor, rendered as
// compact text.

package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/qpkit/qpkit/pkg/pgexec"
)

// systemSchemas is the condition that leaves out PostgreSQL's own schemas.
const systemSchemas = `n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp%'`

const listSchemasSQL = `SELECT n.nspname, obj_description(n.oid, 'pg_namespace')
FROM pg_catalog.pg_namespace n
WHERE ` + systemSchemas + `
ORDER BY 1`

// $1 schema (NULL: all non-system ones), $2 ILIKE pattern (NULL: any).
const listTablesSQL = `SELECT n.nspname, c.relname, c.relkind::text, c.reltuples::bigint,
  obj_description(c.oid, 'pg_class')
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND (($1::text IS NULL AND ` + systemSchemas + `) OR n.nspname = $1::text)
  AND ($2::text IS NULL OR c.relname ILIKE $2::text)
ORDER BY 1, 2`

// The describe_table queries; $1 is the name as the agent wrote it.
const (
	describeRelSQL = `SELECT c.oid::regclass::text, c.relkind::text, c.reltuples::bigint,
  obj_description(c.oid, 'pg_class')
FROM pg_catalog.pg_class c WHERE c.oid = to_regclass($1::text)`

	describeColumnsSQL = `SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
  pg_get_expr(d.adbin, d.adrelid), a.attidentity::text, a.attgenerated::text,
  col_description(a.attrelid, a.attnum)
FROM pg_catalog.pg_attribute a
LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = to_regclass($1::text) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum`

	describeConstraintsSQL = `SELECT k.conname, pg_get_constraintdef(k.oid, true)
FROM pg_catalog.pg_constraint k
WHERE k.conrelid = to_regclass($1::text)
ORDER BY CASE k.contype WHEN 'p' THEN 0 WHEN 'u' THEN 1 WHEN 'f' THEN 2 ELSE 3 END, k.conname`

	// Indexes that back a constraint are shown as the constraint.
	describeIndexesSQL = `SELECT pg_get_indexdef(i.indexrelid)
FROM pg_catalog.pg_index i
WHERE i.indrelid = to_regclass($1::text)
  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint k WHERE k.conindid = i.indexrelid)
ORDER BY i.indexrelid::regclass::text`
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

func truncNote(b *strings.Builder, truncated bool) {
	if truncated {
		fmt.Fprintf(b, "(truncated: first %d shown)\n", catalogMaxRows)
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
	truncNote(&b, truncated)
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
		fmt.Fprintf(&b, "%s.%s %s %s%s\n", str(r[0]), str(r[1]),
			strings.ReplaceAll(kindNames[str(r[2])], " ", "_"), estimate(r[3]), comment(r[4]))
	}
	truncNote(&b, truncated)
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
	cols, _, err := h.query(ctx, describeColumnsSQL, name)
	if err != nil {
		return o.fail(err), nil
	}
	cons, _, err := h.query(ctx, describeConstraintsSQL, name)
	if err != nil {
		return o.fail(err), nil
	}
	idx, _, err := h.query(ctx, describeIndexesSQL, name)
	if err != nil {
		return o.fail(err), nil
	}

	o.rows = len(cols)
	kind := kindNames[str(rel[0][1])]
	var b strings.Builder
	fmt.Fprintf(&b, "-- %s, ~%s rows%s\n", kind, estimate(rel[0][2]), comment(rel[0][3]))
	fmt.Fprintf(&b, "CREATE %s %s (\n", strings.ToUpper(kind), str(rel[0][0]))
	var lines []string
	for _, c := range cols {
		line := "  " + quoteIdent(str(c[0])) + " " + str(c[1])
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
		lines = append(lines, "  CONSTRAINT "+quoteIdent(str(c[0]))+" "+str(c[1])+"\x00")
	}
	for i, l := range lines {
		code, note, _ := strings.Cut(l, "\x00")
		if i < len(lines)-1 {
			code += ","
		}
		b.WriteString(code + note + "\n")
	}
	b.WriteString(");\n")
	for _, r := range idx {
		b.WriteString(str(r[0]) + ";\n")
	}
	return mcp.NewToolResultText(b.String()), nil
}

// quoteIdent quotes a name unless it is a plain lower-case identifier.
func quoteIdent(s string) string {
	plain := s != ""
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
