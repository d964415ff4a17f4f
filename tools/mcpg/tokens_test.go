package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/qpkit/qpkit/pkg/mcpserver"
	"github.com/qpkit/qpkit/pkg/pgexec"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// maxTokenRatio is the target for run_select's default output:
// at most 44% of the gpt-tokenizer (o200k) tokens of the same rows as
// pretty-printed JSON objects. The TSV format measures 0.431.
const maxTokenRatio = 0.44

// countTokens counts the tokens of each text with gpt-tokenizer.
func countTokens(t *testing.T, texts ...string) []int {
	t.Helper()
	dir := npmPackages(t)
	in, err := json.Marshal(texts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const script = `import { encode } from "gpt-tokenizer";
let s = ""; process.stdin.on("data", d => s += d);
process.stdin.on("end", () => console.log(JSON.stringify(JSON.parse(s).map(x => encode(x).length))));`
	cmd := exec.CommandContext(ctx, "node", "--input-type=module", "-e", script)
	cmd.Dir = dir // resolves gpt-tokenizer from dir's node_modules
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v: %s", err, out)
	}
	var n []int
	if err := json.Unmarshal(out, &n); err != nil || len(n) != len(texts) {
		t.Fatalf("token counts %q: %v", out, err)
	}
	return n
}

// TestRunSelectTokens compares run_select's default output for 100 rows x
// 10 columns shaped like TPC-H orders with the same rows as pretty-printed
// JSON objects: the values the default output holds (bpchar without its
// pad, timestamps in PostgreSQL's text form), keyed by column name, with
// numbers and booleans as JSON numbers and booleans.
func TestRunSelectTokens(t *testing.T) {
	db := pgtest.Shared(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `
		DROP SCHEMA IF EXISTS tokens CASCADE;
		CREATE SCHEMA tokens;
		CREATE TABLE tokens.orders (
			o_orderkey bigint PRIMARY KEY,
			o_custkey bigint NOT NULL,
			o_orderstatus char(1) NOT NULL,
			o_totalprice numeric(15,2) NOT NULL,
			o_orderdate date NOT NULL,
			o_orderpriority char(15) NOT NULL,
			o_clerk char(15) NOT NULL,
			o_shippriority int NOT NULL,
			o_comment varchar(79) NOT NULL,
			o_updated_at timestamptz NOT NULL);
		INSERT INTO tokens.orders SELECT
			g * 4 + 1, (g * 7919) % 1500 + 1, (ARRAY['O','F','P'])[g % 3 + 1],
			round((1000 + (g * 104729) % 400000) / 1.0 + (g % 100) / 100.0, 2),
			DATE '1992-01-01' + (g * 37) % 2400,
			(ARRAY['1-URGENT','2-HIGH','3-MEDIUM','4-NOT SPECIFIED','5-LOW'])[g % 5 + 1],
			'Clerk#' || lpad(((g * 13) % 1000 + 1)::text, 9, '0'), 0,
			(ARRAY['furiously regular deposits sleep','quickly final accounts nag blithely',
			  'carefully ironic packages wake','slyly express requests haggle above the pinto beans',
			  'pending theodolites cajole'])[g % 5 + 1] || ' ' || (ARRAY['ideas','foxes','pinto beans','dependencies','asymptotes','platelets','instructions'])[g % 7 + 1],
			TIMESTAMPTZ '2024-01-01 00:00:00+00' + g * interval '17 minutes 3 seconds'
		FROM generate_series(1, 100) g;
		ANALYZE tokens.orders;`); err != nil {
		t.Fatal(err)
	}
	pool, err := pgexec.NewPool(ctx, db.URL(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	srv, err := mcpserver.New(mcpserver.Config{Pool: pool})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	initialize(t, ctx, c)
	call := func(args map[string]any) string {
		t.Helper()
		var req mcp.CallToolRequest
		req.Params.Name = "run_select"
		req.Params.Arguments = args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(mcp.TextContent).Text
		if res.IsError {
			t.Fatalf("run_select: %s", text)
		}
		return text
	}
	const q = "SELECT * FROM tokens.orders ORDER BY o_orderkey"
	text := call(map[string]any{"sql": q})
	jsonText := call(map[string]any{"sql": q, "format": "json"})
	cols, rows := parseTSV(t, text)
	if len(rows) != 100 || len(cols) != 10 {
		t.Fatalf("%d rows x %d columns, want 100 x 10:\n%s", len(rows), len(cols), text)
	}
	objs := make([]map[string]any, len(rows))
	for i, r := range rows {
		objs[i] = map[string]any{}
		for j, col := range cols {
			objs[i][col.name] = naturalJSON(col.typ, r[j])
		}
	}
	pretty, err := json.MarshalIndent(objs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	n := countTokens(t, text, string(pretty), jsonText)
	ratio := float64(n[0]) / float64(n[1])
	t.Logf("run_select (tsv): %d tokens (%d bytes); pretty JSON objects: %d tokens (%d bytes); ratio %.3f", n[0], len(text), n[1], len(pretty), ratio)
	t.Logf("run_select format json: %d tokens (%d bytes); ratio %.3f", n[2], len(jsonText), float64(n[2])/float64(n[1]))
	if ratio > maxTokenRatio {
		t.Errorf("run_select output is %.1f%% of pretty JSON's tokens, more than the target %.0f%%", 100*ratio, 100*maxTokenRatio)
	}
}

type tsvColumn struct{ name, typ string }

// parseTSV reads run_select's tsv output: the name:type header, the rows
// (nil is NULL) and a footer without truncation.
func parseTSV(t *testing.T, text string) ([]tsvColumn, [][]*string) {
	t.Helper()
	lines := strings.Split(text, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[len(lines)-1], "(") || strings.Contains(lines[len(lines)-1], "truncated") {
		t.Fatalf("not a complete tsv result:\n%s", text)
	}
	unescape := strings.NewReplacer(`\\`, `\`, `\t`, "\t", `\n`, "\n", `\r`, "\r", `\b`, "\b", `\f`, "\f", `\v`, "\v")
	var cols []tsvColumn
	for _, f := range strings.Split(lines[0], "\t") {
		i := strings.LastIndexByte(f, ':')
		if i < 0 {
			t.Fatalf("header field %q", f)
		}
		cols = append(cols, tsvColumn{unescape.Replace(f[:i]), f[i+1:]})
	}
	var rows [][]*string
	for _, l := range lines[1 : len(lines)-1] {
		var row []*string
		for _, f := range strings.Split(l, "\t") {
			if f == `\N` {
				row = append(row, nil)
				continue
			}
			v := unescape.Replace(f)
			row = append(row, &v)
		}
		if len(row) != len(cols) {
			t.Fatalf("row %q: %d values, %d columns", l, len(row), len(cols))
		}
		rows = append(rows, row)
	}
	return cols, rows
}

// naturalJSON is a value as JSON naturally carries it: numbers and
// booleans as such, json as is, everything else as a string.
func naturalJSON(typ string, v *string) any {
	switch {
	case v == nil:
		return nil
	case typ == "bool":
		return *v == "t"
	case typ == "json" || typ == "jsonb":
		return json.RawMessage(*v)
	}
	switch typ {
	case "int2", "int4", "int8", "oid", "numeric", "float4", "float8":
		if json.Valid([]byte(*v)) { // not NaN or Infinity
			return json.Number(*v)
		}
	}
	return *v
}
