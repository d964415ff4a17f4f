package mcpserver

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestRecogniseValue: for every request recogniseValue takes, recognise
// takes its encoding too and decodes it into the same call (what the tool
// sees, the id and how it is echoed); the requests it leaves alone are
// the ones whose decoding would differ from their values, or that carry
// what only recognise checks.
func TestRecogniseValue(t *testing.T) {
	fs := newFastServer(t, Config{})
	session := server.NewInProcessSession("value-test", nil)
	params := func(name string, args any) mcp.CallToolParams {
		return mcp.CallToolParams{Name: name, Arguments: args}
	}
	cases := []struct {
		what   string
		id     any
		params any
		taken  bool
	}{
		{"sql", int64(1), params("run_select", map[string]any{"sql": "SELECT 1"}), true},
		{"pointer params", int64(2), ptr(params("run_select", map[string]any{"sql": "SELECT 1"})), true},
		{"no arguments", int64(3), params("list_schemas", nil), true},
		{"empty map", int64(4), params("list_schemas", map[string]any{}), true},
		{"nil map", int64(5), params("list_schemas", map[string]any(nil)), true},
		{"scalars", int64(6), params("echo", map[string]any{"s": "<a & b>\u2028\n\"é", "t": true, "f": false, "n": nil,
			"x": 1.5, "neg0": math.Copysign(0, -1), "tiny": 1e-9, "tinier": -1.25e-123, "small": 1e-6, "under": 9.99e-7,
			"big": 1e21, "below": 1e20 + 12345, "huge": 1.7976931348623157e308, "third": 1.0 / 3, "i": 42, "zero": 0.0, "i64": int64(-1 << 53), "i32": int32(-7), "max_rows": 500}), true},
		{"15-digit id", int64(999_999_999_999_999), params("echo", map[string]any{"a": "b"}), true},
		{"negative id", -5, params("echo", nil), true},
		{"16-digit id", int64(1_000_000_000_000_000), params("echo", nil), false},
		{"string id", "abc", params("echo", nil), false},
		{"int past 2^53", int64(6), params("echo", map[string]any{"i": int64(1<<53 + 1)}), false},
		{"nested", int64(7), params("echo", map[string]any{"a": []any{1.5, "<b>"}}), false},
		{"float32", int64(8), params("echo", map[string]any{"f": float32(0.1)}), false},
		{"invalid UTF-8 value", int64(9), params("echo", map[string]any{"s": "a\xffb"}), false},
		{"invalid UTF-8 key", int64(10), params("echo", map[string]any{"\xff": "b"}), false},
		{"invalid UTF-8 name", int64(11), params("ech\xff", nil), false},
		{"struct arguments", int64(12), params("echo", struct{ A int }{1}), false},
		{"raw arguments", int64(13), mcp.CallToolParams{Name: "echo", RawArguments: json.RawMessage(`{"a":1}`)}, false},
		{"meta", int64(14), mcp.CallToolParams{Name: "echo", Meta: &mcp.Meta{ProgressToken: "p"}}, false},
		{"task", int64(15), mcp.CallToolParams{Name: "echo", Task: &mcp.TaskParams{}}, false},
		{"request state", int64(16), mcp.CallToolParams{Name: "echo", MultiRoundTripParams: mcp.MultiRoundTripParams{RequestState: "s"}}, false},
		{"unknown tool", int64(17), params("nope", nil), false},
		{"not our handler", int64(18), params("noop", nil), false},
		{"map params", int64(19), map[string]any{"name": "echo"}, false},
	}
	for _, c := range cases {
		r := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(c.id), Method: "tools/call", Params: c.params}
		var got fastCall
		if taken := fs.f.recogniseValue(fs.s, session, &r, &got); taken != c.taken {
			t.Errorf("%s: recogniseValue = %v, want %v", c.what, taken, c.taken)
			continue
		}
		if !c.taken {
			continue
		}
		msg, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var want fastCall
		if !fs.f.recognise(fs.s, session, msg, &want, true) {
			t.Errorf("%s: recognise does not take %s", c.what, msg)
			continue
		}
		if !reflect.DeepEqual(got.req, want.req) || got.id != want.id || string(got.idJSON) != string(want.idJSON) ||
			got.legacy != want.legacy || got.tool.Tool.Name != want.tool.Tool.Name {
			t.Errorf("%s:\n values   %#v id %v %s legacy %v\n encoding %#v id %v %s legacy %v", c.what,
				got.req, got.id, got.idJSON, got.legacy, want.req, want.id, want.idJSON, want.legacy)
		}
		if string(got.req.Params.RawArguments) != string(want.req.Params.RawArguments) {
			t.Errorf("%s: raw arguments %s, want %s", c.what, got.req.Params.RawArguments, want.req.Params.RawArguments)
		}
	}
	// Other methods and envelopes are left to recognise.
	for _, r := range []transport.JSONRPCRequest{
		{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(int64(1)), Method: "tools/list", Params: params("echo", nil)},
		{JSONRPC: "1.0", ID: mcp.NewRequestId(int64(1)), Method: "tools/call", Params: params("echo", nil)},
	} {
		var c fastCall
		if fs.f.recogniseValue(fs.s, session, &r, &c) {
			t.Errorf("recogniseValue took %+v", r)
		}
	}
}
