package mcpserver

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mark3labs/mcp-go/client"
)

// TestConnectionsComeBackClean runs every kind of call that can end early
// (refusals, SQL errors, timeouts, truncation, cursors, EXPLAIN, catalog
// tools) on a pool of one, then inspects that one connection directly:
// no open transaction, no prepared statement, no cursor, no advisory lock,
// no setting changed for the session.
func TestConnectionsComeBackClean(t *testing.T) {
	srv, pool := newPoolServer(t, Config{StatementTimeout: 100 * time.Millisecond, MaxRows: 5, AllowFunctions: []string{"pg_sleep"}}, 1)
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	c = start(t, c)
	calls := []struct {
		tool  string
		args  map[string]any
		isErr bool
	}{
		{"run_select", map[string]any{"sql": "SELECT * FROM shop.customers ORDER BY id"}, false},
		{"run_select", map[string]any{"sql": "SELECT 1/0"}, true},
		{"run_select", map[string]any{"sql": "SELECT pg_sleep(1)"}, true},
		{"run_select", map[string]any{"sql": "SELECT * FROM slow_view"}, true},
		{"run_select", map[string]any{"sql": "SET statement_timeout = 0"}, true},
		{"run_select", map[string]any{"sql": "SELECT set_config('search_path', 'x', false)"}, true},
		{"run_select", map[string]any{"sql": "SELECT pg_advisory_lock(1)"}, true},
		{"run_select", map[string]any{"sql": "PREPARE p AS SELECT 1"}, true},
		{"run_select", map[string]any{"sql": "DECLARE c CURSOR WITH HOLD FOR SELECT 1"}, true},
		{"run_select", map[string]any{"sql": "SELECT $1::int + 1", "params": []any{41}}, false},
		{"run_select", map[string]any{"sql": "SELECT nope FROM nowhere"}, true},
		{"explain_query", map[string]any{"sql": "SELECT * FROM shop.orders"}, false},
		{"list_tables", nil, false},
		{"describe_table", map[string]any{"name": "shop.orders"}, false},
	}
	for _, k := range calls {
		text, isErr := call(t, c, k.tool, k.args)
		if isErr != k.isErr {
			t.Errorf("%s %v: isError %v, want %v: %s", k.tool, k.args, isErr, k.isErr, text)
		}
	}
	// A truncated result's cursor page.
	text, _ := call(t, c, "run_select", map[string]any{"sql": "SELECT id FROM shop.customers ORDER BY id"})
	if cur := parseTSV(t, text).Cursor; cur == "" {
		t.Error("no cursor on a truncated result")
	} else if text, isErr := call(t, c, "run_select", map[string]any{"sql": "SELECT id FROM shop.customers ORDER BY id", "cursor": cur}); isErr {
		t.Errorf("cursor page: %s", text)
	}

	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if st := pool.Stat(); st.TotalConns() != 1 {
		t.Fatalf("pool has %d connections, want the one all calls used", st.TotalConns())
	}
	if tx := conn.Conn().PgConn().TxStatus(); tx != 'I' {
		t.Errorf("transaction status %q, want idle", tx)
	}
	for _, q := range []struct{ what, sql string }{
		{"prepared statements", "SELECT count(*) FROM pg_prepared_statements"},
		{"open cursors", "SELECT count(*) FROM pg_cursors"},
		{"advisory locks", "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"},
		{"session settings", "SELECT count(*) FROM pg_settings WHERE source = 'session'"},
	} {
		var n int
		// The simple protocol, so that the check itself leaves no
		// prepared statement or portal behind to count.
		if err := conn.QueryRow(ctx, q.sql, pgx.QueryExecModeSimpleProtocol).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d %s left on the pooled connection", n, q.what)
		}
	}
	var tz string
	if err := conn.QueryRow(ctx, "SHOW search_path", pgx.QueryExecModeSimpleProtocol).Scan(&tz); err != nil || !strings.Contains(tz, "public") {
		t.Errorf("search_path %q, %v", tz, err)
	}
}

// TestTimeoutThroughSleepingView checks that the statement timeout cuts a
// query whose sleep hides inside a view (the validator cannot see it) and
// that the result is a structured tool error, audited.
func TestTimeoutThroughSleepingView(t *testing.T) {
	var buf bytes.Buffer
	a := NewAuditor(&buf, 0)
	c := newClient(t, Config{StatementTimeout: 200 * time.Millisecond, Audit: a})
	t0 := time.Now()
	text, isErr := call(t, c, "run_select", map[string]any{"sql": "SELECT n FROM slow_view"})
	d := time.Since(t0)
	if !isErr || !strings.Contains(text, "timed out") || !strings.Contains(text, "200ms") {
		t.Errorf("isError %v: %q, want a timeout error naming the 200ms limit", isErr, text)
	}
	if d > 2*time.Second {
		t.Errorf("call took %v; the view sleeps 3 s and the timeout is 200 ms", d)
	}
	if recs := auditRecords(t, a, &buf); len(recs) != 1 || recs[0].Verdict != VerdictError || recs[0].Error != text {
		t.Errorf("audit: %+v", recs)
	}
}
