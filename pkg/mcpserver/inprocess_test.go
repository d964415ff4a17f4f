package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestInProcessTransport calls every kind of tool through mcp-go's own
// in-process transport and through ours on one server: the results must be
// the same, and ours must have answered mcpg's tools on the fast path.
func TestInProcessTransport(t *testing.T) {
	fs := newFastServer(t, Config{})
	theirs, err := client.NewInProcessClient(fs.s)
	if err != nil {
		t.Fatal(err)
	}
	start(t, theirs)
	ours := start(t, NewInProcessClient(fs.s))
	ctx := context.Background()

	calls := []struct {
		tool string
		args map[string]any
		fast bool
	}{
		{"run_select", map[string]any{"sql": "SELECT 1 AS one"}, true},
		{"run_select", map[string]any{"sql": "SELECT n, 'x' || n FROM generate_series(1, 5) n", "max_rows": 2}, true},
		{"run_select", map[string]any{"sql": "DELETE FROM orders"}, true},
		{"run_select", map[string]any{"sql": "SELECT 1/0"}, true},
		{"list_schemas", nil, true},
		{"echo", map[string]any{"a": []any{1.5, "<b>"}}, true},
		{"boom", nil, true},
		{"nothing", nil, true},
		{"rich", nil, true},
		{"noop", nil, false},
	}
	for _, c := range calls {
		var req mcp.CallToolRequest
		req.Params.Name = c.tool
		req.Params.Arguments = c.args
		want, werr := theirs.CallTool(ctx, req)
		before := fs.f.served.Load()
		got, gerr := ours.CallTool(ctx, req)
		if served := fs.f.served.Load() - before; (served == 1) != c.fast {
			t.Errorf("%s: fast path served %d calls, want fast=%v", c.tool, served, c.fast)
		}
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Errorf("%s: error %v, mcp-go's transport %v", c.tool, gerr, werr)
			continue
		}
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(got)
		if string(w) != string(g) {
			t.Errorf("%s:\n ours   %s\n mcp-go %s", c.tool, g, w)
		}
	}
	// The echo tool saw the same session kind and client through both.
	fs.mu.Lock()
	seen := fs.seen
	fs.mu.Unlock()
	if len(seen) != 2 || seen[1].ClientInfo.Name != seen[0].ClientInfo.Name || seen[1].Session == "" {
		t.Errorf("echo saw %+v", seen)
	}

	tl, err := ours.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil || len(tl.Tools) == 0 {
		t.Fatalf("tools/list: %v, %v", tl, err)
	}
}

// TestInProcessTransportCancel: a call whose context ends stops the
// statement on the fast path and returns promptly.
func TestInProcessTransportCancel(t *testing.T) {
	fs := newFastServer(t, Config{})
	c := start(t, NewInProcessClient(fs.s))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var req mcp.CallToolRequest
	req.Params.Name = "run_select"
	req.Params.Arguments = map[string]any{"sql": "SELECT * FROM public.slow_view"}
	t0 := time.Now()
	res, err := c.CallTool(ctx, req)
	if d := time.Since(t0); d > 2*time.Second {
		t.Fatalf("the cancelled call took %v", d)
	}
	if err == nil && !res.IsError {
		t.Fatalf("the cancelled call of a 3 s view returned a result: %+v", res)
	}
	if err == nil {
		if text := res.Content[0].(mcp.TextContent).Text; !strings.Contains(text, "cancel") && !strings.Contains(text, "deadline") {
			t.Errorf("cancelled call says %q", text)
		}
	}
}
