package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestInProcessTransport calls every kind of tool through mcp-go's own
// in-process transport and through ours on one server, with the client
// speaking 2026-07-28 and 2025-11-25: the results must be the same, and
// ours must have answered mcpg's tools on the fast path.
func TestInProcessTransport(t *testing.T) {
	for _, v := range []string{mcp.LATEST_PROTOCOL_VERSION, mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
		t.Run(v, func(t *testing.T) { inProcessTransport(t, v) })
	}
}

func inProcessTransport(t *testing.T, version string) {
	fs := newFastServer(t, Config{})
	theirs, err := client.NewInProcessClient(fs.s)
	if err != nil {
		t.Fatal(err)
	}
	startVersion(t, theirs, version)
	ours := startVersion(t, NewInProcessClient(fs.s), version)
	ctx := context.Background()

	// values: an earlier version's call the transport takes from its
	// values (inprocess_value.go); the others are encoded first.
	legacy := version != mcp.LATEST_PROTOCOL_VERSION
	calls := []struct {
		tool   string
		args   map[string]any
		fast   bool
		values bool
	}{
		{"run_select", map[string]any{"sql": "SELECT 1 AS one"}, true, legacy},
		{"run_select", map[string]any{"sql": "SELECT n, 'x' || n FROM generate_series(1, 5) n", "max_rows": 2}, true, legacy},
		{"run_select", map[string]any{"sql": "DELETE FROM orders"}, true, legacy},
		{"run_select", map[string]any{"sql": "SELECT 1/0"}, true, legacy},
		{"list_schemas", nil, true, legacy},
		{"echo", map[string]any{"a": []any{1.5, "<b>"}}, true, false},
		{"echo", map[string]any{"n": 7, "s": "<x>"}, true, legacy},
		{"boom", nil, true, legacy},
		{"nothing", nil, true, legacy},
		{"rich", nil, true, legacy},
		{"noop", nil, false, false},
	}
	for _, c := range calls {
		var req mcp.CallToolRequest
		req.Params.Name = c.tool
		req.Params.Arguments = c.args
		want, werr := theirs.CallTool(ctx, req)
		before, beforeValues := fs.f.served.Load(), fs.f.fromValues.Load()
		got, gerr := ours.CallTool(ctx, req)
		if served := fs.f.served.Load() - before; (served == 1) != c.fast {
			t.Errorf("%s: fast path served %d calls, want fast=%v", c.tool, served, c.fast)
		}
		if n := fs.f.fromValues.Load() - beforeValues; (n == 1) != c.values {
			t.Errorf("%s %v: %d calls taken from values, want values=%v", c.tool, c.args, n, c.values)
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
	// The echo tool saw the same parameters, session kind and client
	// through both, call by call (mcp-go's transport first).
	fs.mu.Lock()
	seen := fs.seen
	fs.mu.Unlock()
	if len(seen) != 4 {
		t.Fatalf("echo saw %d calls, want 4: %+v", len(seen), seen)
	}
	for i := 0; i < len(seen); i += 2 {
		theirs, ours := seen[i], seen[i+1]
		if !reflect.DeepEqual(ours.Req.Params, theirs.Req.Params) || ours.ClientInfo.Name != theirs.ClientInfo.Name || ours.Session == "" {
			t.Errorf("echo saw\n ours   %+v\n mcp-go %+v", ours, theirs)
		}
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

// TestResultResponse: the response the in-process transport makes of a
// fast-path result without decoding it is the one json.Unmarshal makes,
// for every reply of the corpus; error replies are left to json.Unmarshal.
func TestResultResponse(t *testing.T) {
	fs := newFastServer(t, Config{})
	ctx := context.Background()
	results, errors := 0, 0
	for _, cc := range corpus() {
		var c fastCall
		if !fs.f.recognise(fs.s, nil, []byte(cc.msg), &c, true) {
			continue
		}
		reply := fs.f.serve(ctx, &c, nil, nil)
		var want transport.JSONRPCResponse
		if err := json.Unmarshal(reply, &want); err != nil {
			t.Fatalf("%s: %v", cc.name, err)
		}
		got, ok := resultResponse(reply, &c)
		if ok != (want.Error == nil) {
			t.Errorf("%s: shortcut %v for %s", cc.name, ok, reply)
			continue
		}
		if !ok {
			errors++
			continue
		}
		results++
		if !reflect.DeepEqual(*got, want) || !bytes.Equal(got.Result, want.Result) {
			t.Errorf("%s:\n got  %+v %s\n want %+v %s", cc.name, *got, got.Result, want, want.Result)
		}
	}
	if results < 20 || errors < 2 {
		t.Errorf("%d results and %d errors compared", results, errors)
	}
}
