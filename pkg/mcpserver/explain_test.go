package mcpserver

import (
	"strings"
	"testing"
)

func TestExplainQuery(t *testing.T) {
	c := newClient(t, Config{})
	text, isErr := call(t, c, "explain_query", map[string]any{"sql": "SELECT * FROM shop.orders WHERE customer_id = 3"})
	if isErr || !strings.Contains(text, "Seq Scan on orders") || !strings.Contains(text, "cost=") || strings.Contains(text, "actual") {
		t.Errorf("plan: %v\n%s", isErr, text)
	}
	for _, tc := range []struct {
		args   map[string]any
		prefix string
	}{
		{map[string]any{"sql": "SELECT 1", "analyze": true}, "EXPLAIN ANALYZE is disabled"},
		{map[string]any{"sql": "DELETE FROM shop.orders"}, "refused at offset 0: "},
		{map[string]any{"sql": "SELECT 1; SELECT 2"}, "refused at offset "},
		{map[string]any{"sql": "EXPLAIN SELECT 1"}, "explain_query takes a SELECT-like statement"},
		{map[string]any{"sql": "SHOW work_mem"}, "explain_query takes a SELECT-like statement"},
		{map[string]any{"sql": "SELECT * FROM nope"}, "ERROR 42P01: "},
		{map[string]any{}, "required argument \"sql\""},
	} {
		text, isErr := call(t, c, "explain_query", tc.args)
		if !isErr || !strings.HasPrefix(text, tc.prefix) {
			t.Errorf("%v: %v %q, want error %q", tc.args, isErr, text, tc.prefix)
		}
	}
	// The orders are still there: ANALYZE refused means nothing ran.
	an := newClient(t, Config{AllowExplainAnalyze: true})
	text, isErr = call(t, an, "explain_query", map[string]any{"sql": "SELECT count(*) FROM shop.orders", "analyze": true})
	if isErr || !strings.Contains(text, "actual") || !strings.Contains(text, "Execution Time") {
		t.Errorf("analyze: %v\n%s", isErr, text)
	}
	text, isErr = call(t, an, "explain_query", map[string]any{"sql": "WITH d AS (DELETE FROM shop.orders RETURNING 1) SELECT * FROM d", "analyze": true})
	if !isErr || !strings.HasPrefix(text, "refused at offset ") {
		t.Errorf("analyze of a write: %v %q", isErr, text)
	}
}
