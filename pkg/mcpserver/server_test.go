package mcpserver

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const fixture = `
CREATE SCHEMA shop;
COMMENT ON SCHEMA shop IS 'the shop';
CREATE TABLE shop.customers (
  id int PRIMARY KEY,
  name text NOT NULL,
  email text UNIQUE
);
COMMENT ON TABLE shop.customers IS 'people who buy';
CREATE TABLE shop.orders (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  customer_id int NOT NULL REFERENCES shop.customers(id),
  total numeric(10,2) DEFAULT 0,
  placed_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON COLUMN shop.orders.total IS 'in euros';
CREATE INDEX orders_placed_at_idx ON shop.orders (placed_at);
INSERT INTO shop.customers SELECT g, 'c' || g, 'c' || g || '@x' FROM generate_series(1, 300) g;
INSERT INTO shop.orders (customer_id, total) SELECT 1 + g % 300, g FROM generate_series(1, 50) g;
CREATE VIEW public.slow_view AS SELECT pg_sleep(3)::text AS slept, 1 AS n;
ANALYZE;
`

var setupOnce sync.Once

// newServer builds the server on a database with the fixture, over a
// pool of two connections.
func newServer(t *testing.T, cfg Config) *server.MCPServer {
	t.Helper()
	srv, _ := newPoolServer(t, cfg, 2)
	return srv
}

// newClient starts the server in-process on a database with the fixture
// and returns an initialized client.
func newClient(t *testing.T, cfg Config) *client.Client {
	t.Helper()
	return start(t, NewInProcessClient(newServer(t, cfg)))
}

// start starts and initializes c, closing it when the test ends.
func start(t *testing.T, c *client.Client) *client.Client {
	t.Helper()
	return startVersion(t, c, mcp.LATEST_PROTOCOL_VERSION)
}

// startVersion is start with the protocol version the client asks for.
func startVersion(t *testing.T, c *client.Client, version string) *client.Client {
	t.Helper()
	ctx := context.Background()
	t.Cleanup(func() { c.Close() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	if got := c.ProtocolVersion(); got != version {
		t.Fatalf("negotiated protocol version %s, want %s", got, version)
	}
	return c
}

// call calls a tool and returns its single text and isError.
func call(t *testing.T, c *client.Client, tool string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var req mcp.CallToolRequest
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d contents, want 1", tool, len(res.Content))
	}
	tc, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content %T, want text", tool, res.Content[0])
	}
	return tc.Text, res.IsError
}

// doc is a run_select result: decode reads format json, parseTSV the
// default tsv (its values are strings, nil for NULL).
type doc struct {
	Columns     []struct{ Name, Type string } `json:"columns"`
	Rows        [][]any                       `json:"rows"`
	RowCount    int                           `json:"row_count"`
	Truncated   bool                          `json:"truncated"`
	TruncatedBy string                        `json:"truncated_by"`
	Cursor      string                        `json:"cursor"`
}

func decode(t testing.TB, text string) doc {
	t.Helper()
	var d doc
	if err := json.Unmarshal([]byte(text), &d); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, text)
	}
	return d
}

var (
	tsvFooter  = regexp.MustCompile(`^\((\d+) rows(?:, truncated by (rows|bytes))?(?:; cursor: ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+))?\)$`)
	tsvUnknown = regexp.MustCompile(`:(oid:\d+)$`)
	copyEscape = strings.NewReplacer(`\\`, `\`, `\t`, "\t", `\n`, "\n", `\r`, "\r", `\b`, "\b", `\f`, "\f", `\v`, "\v")
)

// parseTSV reads a tsv result (docs/mcpg.md, "Output formats").
func parseTSV(t testing.TB, text string) doc {
	t.Helper()
	lines := strings.Split(text, "\n")
	if len(lines) < 2 {
		t.Fatalf("not TSV, no header and footer:\n%s", text)
	}
	var d doc
	for _, f := range strings.Split(lines[0], "\t") {
		name, typ := f, ""
		if m := tsvUnknown.FindStringSubmatchIndex(f); m != nil {
			name, typ = f[:m[0]], f[m[2]:]
		} else if i := strings.LastIndexByte(f, ':'); i >= 0 {
			name, typ = f[:i], f[i+1:]
		} else {
			t.Fatalf("header field %q has no type:\n%s", f, text)
		}
		d.Columns = append(d.Columns, struct{ Name, Type string }{copyEscape.Replace(name), typ})
	}
	for _, l := range lines[1 : len(lines)-1] {
		var row []any
		for _, f := range strings.Split(l, "\t") {
			if f == `\N` {
				row = append(row, nil)
			} else {
				row = append(row, copyEscape.Replace(f))
			}
		}
		if len(row) != len(d.Columns) {
			t.Fatalf("row %q: %d values for %d columns", l, len(row), len(d.Columns))
		}
		d.Rows = append(d.Rows, row)
	}
	m := tsvFooter.FindStringSubmatch(lines[len(lines)-1])
	if m == nil {
		t.Fatalf("no footer:\n%s", text)
	}
	d.RowCount, _ = strconv.Atoi(m[1])
	d.TruncatedBy, d.Cursor = m[2], m[3]
	d.Truncated = d.TruncatedBy != ""
	if d.RowCount != len(d.Rows) {
		t.Fatalf("footer says %d rows, %d lines:\n%s", d.RowCount, len(d.Rows), text)
	}
	return d
}

func TestListTools(t *testing.T) {
	c := newClient(t, Config{})
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"run_select": true, "explain_query": true, "list_schemas": true, "list_tables": true, "describe_table": true}
	for _, tool := range res.Tools {
		if !want[tool.Name] {
			t.Errorf("unexpected tool %s", tool.Name)
		}
		delete(want, tool.Name)
		a := tool.Annotations
		if a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint ||
			a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: annotations %+v, want read-only, not destructive, closed world", tool.Name, a)
		}
	}
	if len(want) != 0 {
		t.Errorf("missing tools %v", want)
	}
	// Every tool definition is sent to the model with each request, so the
	// list must stay small: 6000 bytes is about 1,500 tokens at ~4 bytes
	// per token.
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 6000 {
		t.Errorf("tools/list is %d bytes, want at most 6000:\n%s", len(b), b)
	}
	t.Logf("tools/list: %d bytes", len(b))
}

func TestRunSelectParams(t *testing.T) {
	c := newClient(t, Config{})
	text, isErr := call(t, c, "run_select", map[string]any{
		"sql":    "SELECT id, name FROM shop.customers WHERE id BETWEEN $1 AND $2 AND name <> $3 ORDER BY id",
		"params": []any{2, 4, "c3"},
	})
	if isErr {
		t.Fatal(text)
	}
	d := parseTSV(t, text)
	if len(d.Columns) != 2 || d.Columns[0].Name != "id" || d.Columns[1].Type != "text" {
		t.Errorf("columns %+v", d.Columns)
	}
	if d.RowCount != 2 || d.Truncated || len(d.Rows) != 2 || d.Rows[1][1] != "c4" {
		t.Errorf("got %s", text)
	}
}

// TestRunSelectFormats: tsv by default, json on request, the same rows.
func TestRunSelectFormats(t *testing.T) {
	c := newClient(t, Config{})
	const q = `SELECT id, name, NULL::text AS "no` + "\t" + `thing", E'a\\b\nc'::text AS s, 'x'::char(3) AS ch, 1.50::numeric AS n,
		'2024-01-02 03:04:05+00'::timestamptz AS at FROM shop.customers WHERE id <= 2 ORDER BY id`
	for _, args := range []map[string]any{{"sql": q}, {"sql": q, "format": "tsv"}} {
		text, isErr := call(t, c, "run_select", args)
		want := "id:int4\tname:text\tno\\tthing:text\ts:text\tch:bpchar\tn:numeric\tat:timestamptz\n" +
			"1\tc1\t\\N\ta\\\\b\\nc\tx\t1.50\t2024-01-02 03:04:05+00\n" +
			"2\tc2\t\\N\ta\\\\b\\nc\tx\t1.50\t2024-01-02 03:04:05+00\n" +
			"(2 rows)"
		if isErr || text != want {
			t.Errorf("%v:\ngot  %q\nwant %q", args, text, want)
		}
	}
	text, isErr := call(t, c, "run_select", map[string]any{"sql": q, "format": "json"})
	want := `{"columns":[{"name":"id","type":"int4"},{"name":"name","type":"text"},{"name":"no\tthing","type":"text"},` +
		`{"name":"s","type":"text"},{"name":"ch","type":"bpchar"},{"name":"n","type":"numeric"},{"name":"at","type":"timestamptz"}],` +
		`"rows":[[1,"c1",null,"a\\b\nc","x  ",1.50,"2024-01-02T03:04:05+00:00"],[2,"c2",null,"a\\b\nc","x  ",1.50,"2024-01-02T03:04:05+00:00"]],` +
		`"row_count":2,"truncated":false}`
	if isErr || text != want {
		t.Errorf("json:\ngot  %s\nwant %s", text, want)
	}
	// The parsed forms agree.
	tsv, _ := call(t, c, "run_select", map[string]any{"sql": q})
	if d := parseTSV(t, tsv); d.Columns[2].Name != "no\tthing" || d.Rows[0][2] != nil || d.Rows[1][3] != "a\\b\nc" {
		t.Errorf("parsed tsv %+v", d)
	}
	text, isErr = call(t, c, "run_select", map[string]any{"sql": "SELECT 1", "format": "csv"})
	if !isErr || text != `format must be "tsv" or "json"` {
		t.Errorf("format csv: %v %q", isErr, text)
	}
}

func TestRunSelectRowCap(t *testing.T) {
	c := newClient(t, Config{MaxRows: 20})
	text, isErr := call(t, c, "run_select", map[string]any{"sql": "SELECT id FROM shop.customers ORDER BY id"})
	if isErr {
		t.Fatal(text)
	}
	if d := parseTSV(t, text); !d.Truncated || d.TruncatedBy != "rows" || d.RowCount != 20 || len(d.Rows) != 20 || d.Rows[19][0] != "20" {
		t.Errorf("server cap: got %s", text)
	}
	if !strings.Contains(text, "\n20\n(20 rows, truncated by rows; cursor: ") {
		t.Errorf("text does not say it is truncated: %s", text)
	}
	text, _ = call(t, c, "run_select", map[string]any{"sql": "SELECT id FROM shop.customers ORDER BY id", "format": "json"})
	if d := decode(t, text); !d.Truncated || d.TruncatedBy != "rows" || d.RowCount != 20 || len(d.Rows) != 20 || d.Cursor == "" ||
		!strings.Contains(text, `[20]],"row_count":20,"truncated":true,"truncated_by":"rows","cursor":"`) {
		t.Errorf("server cap, json: got %s", text)
	}
	// max_rows lowers the cap, never raises it.
	text, _ = call(t, c, "run_select", map[string]any{"sql": "SELECT id FROM shop.customers", "max_rows": 5})
	if d := parseTSV(t, text); !d.Truncated || d.RowCount != 5 {
		t.Errorf("max_rows 5: got %s", text)
	}
	text, _ = call(t, c, "run_select", map[string]any{"sql": "SELECT id FROM shop.customers", "max_rows": 1000})
	if d := parseTSV(t, text); !d.Truncated || d.RowCount != 20 {
		t.Errorf("max_rows 1000 with cap 20: got %s", text)
	}
	if text, isErr := call(t, c, "run_select", map[string]any{"sql": "SELECT 1", "max_rows": 0}); !isErr {
		t.Errorf("max_rows 0 accepted: %s", text)
	}
}

func TestRunSelectErrors(t *testing.T) {
	c := newClient(t, Config{StatementTimeout: 200 * time.Millisecond, AllowFunctions: []string{"pg_sleep"}})
	plain := newClient(t, Config{})
	cases := []struct {
		name   string
		c      *client.Client
		sql    string
		prefix string
		has    []string
	}{
		{"refusal", plain, "select pg_sleep(1)", "refused at offset 7: ", nil},
		{"write", plain, "DELETE FROM shop.orders", "refused at offset 0: ", nil},
		{"writable CTE", plain, "WITH d AS (DELETE FROM shop.orders RETURNING 1) SELECT * FROM d", "refused at offset ", nil},
		{"missing table", plain, "select * from nope", "ERROR 42P01: ", []string{`relation "nope" does not exist`, "(at character 15)"}},
		{"hint", plain, "select nmae from shop.customers", "ERROR 42703: ", []string{"HINT: "}},
		{"timeout", c, "select pg_sleep(5)", "statement timed out after 200ms", nil},
	}
	for _, tc := range cases {
		text, isErr := call(t, tc.c, "run_select", map[string]any{"sql": tc.sql})
		if !isErr {
			t.Errorf("%s: not an error: %s", tc.name, text)
			continue
		}
		if !strings.HasPrefix(text, tc.prefix) || strings.Contains(text, "\n") {
			t.Errorf("%s: got %q, want one line starting %q", tc.name, text, tc.prefix)
		}
		for _, h := range tc.has {
			if !strings.Contains(text, h) {
				t.Errorf("%s: %q lacks %q", tc.name, text, h)
			}
		}
	}
	text, _ := call(t, plain, "run_select", map[string]any{"sql": "SELECT count(*) FROM shop.orders"})
	if d := parseTSV(t, text); len(d.Rows) != 1 || d.Rows[0][0] != "50" {
		t.Errorf("orders changed: %s", text)
	}
}

func TestListSchemas(t *testing.T) {
	c := newClient(t, Config{})
	text, isErr := call(t, c, "list_schemas", nil)
	if isErr {
		t.Fatal(text)
	}
	if !strings.Contains(text, "shop -- the shop\n") || !strings.Contains(text, "public") {
		t.Errorf("got %q", text)
	}
	for _, sys := range []string{"pg_catalog", "information_schema", "pg_toast"} {
		if strings.Contains(text, sys) {
			t.Errorf("lists %s: %q", sys, text)
		}
	}
}

func TestListTables(t *testing.T) {
	c := newClient(t, Config{})
	text, isErr := call(t, c, "list_tables", map[string]any{"schema": "shop"})
	if isErr {
		t.Fatal(text)
	}
	for _, want := range []string{"shop.customers table 300 -- people who buy\n", "shop.orders table 50\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q:\n%s", want, text)
		}
	}
	text, _ = call(t, c, "list_tables", map[string]any{"pattern": "ORD%"})
	if !strings.Contains(text, "shop.orders") || strings.Contains(text, "customers") {
		t.Errorf("pattern ORD%%: %s", text)
	}
	text, _ = call(t, c, "list_tables", map[string]any{"schema": "pg_catalog", "pattern": "pg_class"})
	if !strings.Contains(text, "pg_catalog.pg_class table") {
		t.Errorf("an explicit system schema is listed: %s", text)
	}
	text, _ = call(t, c, "list_tables", map[string]any{"schema": "nope'; drop table x; --"})
	if !strings.Contains(text, "(no tables)") {
		t.Errorf("unknown schema: %s", text)
	}
}

func TestDescribeTable(t *testing.T) {
	c := newClient(t, Config{})
	text, isErr := call(t, c, "describe_table", map[string]any{"name": "shop.orders"})
	if isErr {
		t.Fatal(text)
	}
	for _, want := range []string{
		"-- table, ~50 rows\n",
		"CREATE TABLE shop.orders (\n",
		"  id bigint NOT NULL GENERATED ALWAYS AS IDENTITY,\n",
		"  customer_id integer NOT NULL,\n",
		"  total numeric(10,2) DEFAULT 0, -- in euros\n",
		"  placed_at timestamp with time zone NOT NULL DEFAULT now(),\n",
		"  CONSTRAINT orders_pkey PRIMARY KEY (id),\n",
		"  CONSTRAINT orders_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES shop.customers(id)\n);\n",
		"CREATE INDEX orders_placed_at_idx ON shop.orders USING btree (placed_at);\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q:\n%s", want, text)
		}
	}
	text, _ = call(t, c, "describe_table", map[string]any{"name": "shop.customers"})
	if !strings.Contains(text, "UNIQUE (email)") || !strings.Contains(text, "-- people who buy") {
		t.Errorf("customers:\n%s", text)
	}
	text, isErr = call(t, c, "describe_table", map[string]any{"name": "shop.nope"})
	if !isErr || text != `relation "shop.nope" does not exist` {
		t.Errorf("missing table: %v %q", isErr, text)
	}
}
