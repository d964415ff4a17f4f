package mcpserver

// The fast path against mcp-go: every message of a corpus goes through
// MCPServer.HandleMessage and through the fast path on the same server, in
// process, on streamable HTTP and on stdio, and the replies, what the tool
// saw, the audit records and the metrics must be the same.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// fastServer is a server with the fast path, its handler, and test tools
// registered through handler.tool (so the fast path serves them too).
type fastServer struct {
	s     *server.MCPServer
	h     *handler
	f     *fastPath
	audit *bytes.Buffer

	mu   sync.Mutex
	seen []echoSeen // what the echo tool saw, call by call
}

// echoSeen is what the echo tool saw of one call.
type echoSeen struct {
	Req        mcp.CallToolRequest
	Principal  string
	Session    string
	ClientInfo mcp.Implementation
}

func newFastServer(t *testing.T, cfg Config) *fastServer {
	t.Helper()
	_, pool := newPoolServer(t, Config{}, 2)
	cfg.Pool = pool
	fs := &fastServer{audit: &bytes.Buffer{}}
	if cfg.Audit == nil {
		cfg.Audit = NewAuditor(fs.audit, 0)
	}
	s, h, err := build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fs.s, fs.h, fs.f = s, h, fastPathOf(s)
	if fs.f == nil {
		t.Fatal("New registered no fast path")
	}
	s.AddTool(mcp.NewTool("echo"), h.tool("echo", func(ctx context.Context, req mcp.CallToolRequest, o *outcome) (*mcp.CallToolResult, error) {
		e := echoSeen{Req: req, Principal: principal(ctx)}
		if cs := server.ClientSessionFromContext(ctx); cs != nil {
			e.Session = cs.SessionID()
			if ci, ok := cs.(server.SessionWithClientInfo); ok {
				e.ClientInfo = ci.GetClientInfo()
			}
		}
		fs.mu.Lock()
		fs.seen = append(fs.seen, e)
		fs.mu.Unlock()
		args, _ := json.Marshal(req.GetRawArguments())
		return mcp.NewToolResultText("args " + string(args)), nil
	}))
	s.AddTool(mcp.NewTool("boom"), h.tool("boom", func(context.Context, mcp.CallToolRequest, *outcome) (*mcp.CallToolResult, error) {
		return nil, errors.New("boom <&> \u2028")
	}))
	s.AddTool(mcp.NewTool("nothing"), h.tool("nothing", func(context.Context, mcp.CallToolRequest, *outcome) (*mcp.CallToolResult, error) {
		return nil, nil
	}))
	s.AddTool(mcp.NewTool("rich"), h.tool("rich", func(context.Context, mcp.CallToolRequest, *outcome) (*mcp.CallToolResult, error) {
		r := mcp.NewToolResultStructured(map[string]any{"b": 1, "a": []any{"x<", 2.5}}, "two <contents>")
		r.Content = append(r.Content, mcp.NewImageContent("aGk=", "image/png"),
			mcp.TextContent{Type: "text", Text: "annotated", Annotated: mcp.Annotated{Annotations: &mcp.Annotations{Priority: ptr(0.5)}}})
		r.Meta = mcp.NewMetaFromMap(map[string]any{"k": "v"})
		r.IsError = true
		return r, nil
	}))
	s.AddTool(mcp.NewTool("noop"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("not ours"), nil
	})
	return fs
}

func ptr[T any](v T) *T { return &v }

// meta is the _meta mcp-go's client sends with every 2026-07-28 request.
const meta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"test","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`

// tcall is a 2026-07-28 tools/call of tool with arguments args (JSON).
func tcall(id, tool, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + meta + `,"name":"` + tool + `","arguments":` + args + `}}`
}

// lcall is a tools/call of a protocol version before 2026-07-28 (as
// mcp-go's client and the TypeScript SDK send it after initialize).
func lcall(id, tool, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

// callMeta is tcall with another _meta.
func callMeta(id, tool, args, metaJSON string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"_meta":` + metaJSON + `,"name":"` + tool + `","arguments":` + args + `}}`
}

// corpusCase is one message and whether the fast path must answer it.
type corpusCase struct {
	name string
	msg  string
	fast bool
}

// legacy reports whether c is a call of a protocol version before
// 2026-07-28, which only the transports with a known session (stdio, in
// process) answer on the fast path.
func (c corpusCase) legacy() bool { return strings.HasPrefix(c.name, "legacy ") }

// corpus is the messages every transport's test sends.
func corpus() []corpusCase {
	const v = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
	const caps = `"io.modelcontextprotocol/clientCapabilities":{}`
	sel1 := `{"sql":"SELECT 1"}`
	cases := []corpusCase{
		// Every tool, success and tool errors.
		{"select1", tcall("1", "run_select", sel1), true},
		{"params", tcall("2", "run_select", `{"sql":"SELECT $1::int, $2::text, $3::text IS NULL, $4::bool, $5::float8","params":[1,"a<b",null,true,1.5]}`), true},
		{"json format", tcall("3", "run_select", `{"sql":"SELECT 1 AS a, 'x' AS b","format":"json"}`), true},
		{"truncated", tcall("4", "run_select", `{"sql":"SELECT g FROM generate_series(1, 10) g ORDER BY g","max_rows":3}`), true},
		{"odd text", tcall("5", "run_select", `{"sql":"SELECT chr(1) || chr(8) || chr(12) || '<>&\"\\' || chr(8232) || chr(8233) || 'é€😀' || E'\\t\\n\\r' AS t"}`), true},
		{"refusal", tcall("6", "run_select", `{"sql":"DELETE FROM shop.orders"}`), true},
		{"syntax", tcall("7", "run_select", `{"sql":"SELEC 1"}`), true},
		{"query error", tcall("8", "run_select", `{"sql":"SELECT 1/0"}`), true},
		{"missing sql", tcall("9", "run_select", `{}`), true},
		{"sql not a string", tcall("10", "run_select", `{"sql":5}`), true},
		{"params not an array", tcall("11", "run_select", `{"sql":"SELECT 1","params":{"a":1}}`), true},
		{"bad format", tcall("12", "run_select", `{"sql":"SELECT 1","format":"xml"}`), true},
		{"bad max_rows", tcall("13", "run_select", `{"sql":"SELECT 1","max_rows":0}`), true},
		{"max_rows string", tcall("14", "run_select", `{"sql":"SELECT 1","max_rows":"x"}`), true},
		{"bad cursor", tcall("15", "run_select", `{"sql":"SELECT 1","cursor":"nope"}`), true},
		{"arguments null", tcall("16", "run_select", `null`), true},
		{"arguments array", tcall("17", "run_select", `[1]`), true},
		{"explain", tcall("18", "explain_query", sel1), true},
		{"explain analyze off", tcall("19", "explain_query", `{"sql":"SELECT 1","analyze":true}`), true},
		{"list_schemas", tcall("20", "list_schemas", `{}`), true},
		{"list_tables", tcall("21", "list_tables", `{"schema":"shop","pattern":"cust%"}`), true},
		{"describe", tcall("22", "describe_table", `{"name":"shop.orders"}`), true},
		{"describe missing", tcall("23", "describe_table", `{"name":"nope"}`), true},
		{"echo", tcall("24", "echo", `{"a":[1,2.50,1e400],"b":{"c":null}}`), false}, // 1e400 does not decode
		{"echo big int", tcall("25", "echo", `{"n":12345678901234567890,"s":"\u00e9\n"}`), true},
		{"boom", tcall("26", "boom", `{}`), true},
		{"no result", tcall("27", "nothing", `{}`), true},
		{"rich result", tcall("28", "rich", `{}`), true},
		// Ids of every JSON type.
		{"id 0", tcall("0", "echo", `{}`), true},
		{"id negative", tcall("-7", "echo", `{}`), true},
		{"id 15 digits", tcall("123456789012345", "echo", `{}`), true},
		{"id 16 digits", tcall("1234567890123456", "echo", `{}`), false},
		{"id -0", tcall("-0", "echo", `{}`), false},
		{"id fraction", tcall("1.5", "echo", `{}`), false},
		{"id exponent", tcall("1e3", "echo", `{}`), false},
		{"id string", tcall(`"abc"`, "echo", `{}`), true},
		{"id empty string", tcall(`""`, "echo", `{}`), true},
		{"id html", tcall(`"<a&b>"`, "echo", `{}`), true},
		{"id escaped", tcall(`"\u00e9\n\u2028"`, "echo", `{}`), true},
		{"id true", tcall("true", "echo", `{}`), false},
		{"id null", tcall("null", "echo", `{}`), false},
		{"id object", tcall(`{"a":1}`, "echo", `{}`), false},
		{"id array", tcall("[1]", "echo", `{}`), false},
		// _meta.
		{"meta progressToken", callMeta("40", "echo", `{}`, `{"progressToken":"p1",`+v+`,`+caps+`}`), true},
		{"meta numeric progressToken", callMeta("41", "echo", `{}`, `{"progressToken":7,`+v+`,`+caps+`}`), true},
		{"meta no clientInfo", callMeta("42", "echo", `{}`, `{`+v+`,`+caps+`}`), true},
		{"meta capabilities", callMeta("43", "echo", `{}`, `{`+v+`,"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"sampling":{}}}`), true},
		{"meta capabilities bad", callMeta("44", "echo", `{}`, `{`+v+`,"io.modelcontextprotocol/clientCapabilities":"x"}`), false},
		{"meta capabilities missing", callMeta("45", "echo", `{}`, `{`+v+`}`), false},
		{"meta old version", callMeta("46", "echo", `{}`, `{"io.modelcontextprotocol/protocolVersion":"2025-06-18",`+caps+`}`), false},
		{"meta unknown version", callMeta("47", "echo", `{}`, `{"io.modelcontextprotocol/protocolVersion":"2099-01-01",`+caps+`}`), false},
		{"meta logLevel", callMeta("48", "echo", `{}`, `{`+v+`,`+caps+`,"io.modelcontextprotocol/logLevel":"debug"}`), false},
		{"meta traceparent", callMeta("49", "echo", `{}`, `{`+v+`,`+caps+`,"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`), false},
		{"meta not an object", callMeta("50", "echo", `{}`, `5`), false},
		{"meta null", callMeta("51", "echo", `{}`, `null`), false},
		// Params and envelope.
		{"pretty", "\n {\n \"jsonrpc\" : \"2.0\",\n \"method\":\"tools/call\", \"params\" : {\"arguments\":{\"sql\":\"SELECT 2\"}, \"name\":\"run_select\", " + meta + "}, \"id\" : 60 }\r\n", true},
		{"no arguments", `{"jsonrpc":"2.0","id":61,"method":"tools/call","params":{` + meta + `,"name":"echo"}}`, true},
		{"task", `{"jsonrpc":"2.0","id":62,"method":"tools/call","params":{` + meta + `,"name":"echo","arguments":{},"task":{}}}`, false},
		{"requestState", `{"jsonrpc":"2.0","id":63,"method":"tools/call","params":{` + meta + `,"name":"echo","arguments":{},"requestState":"s"}}`, false},
		{"params extra", `{"jsonrpc":"2.0","id":64,"method":"tools/call","params":{` + meta + `,"name":"echo","arguments":{},"x":1}}`, false},
		{"params twice", `{"jsonrpc":"2.0","id":65,"method":"tools/call","params":{` + meta + `,"name":"echo"},"params":{` + meta + `,"name":"echo","arguments":{"a":1}}}`, false},
		{"arguments twice", `{"jsonrpc":"2.0","id":66,"method":"tools/call","params":{` + meta + `,"name":"echo","arguments":{"a":1},"arguments":{"b":2}}}`, false},
		{"name twice", `{"jsonrpc":"2.0","id":67,"method":"tools/call","params":{` + meta + `,"name":"boom","name":"echo"}}`, false},
		{"Params", `{"jsonrpc":"2.0","id":68,"method":"tools/call","Params":{` + meta + `,"name":"echo"}}`, false},
		{"envelope extra", `{"jsonrpc":"2.0","id":69,"method":"tools/call","x":1,"params":{` + meta + `,"name":"echo"}}`, false},
		{"result member", `{"jsonrpc":"2.0","id":70,"method":"tools/call","result":{},"params":{` + meta + `,"name":"echo"}}`, false},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":71,"method":"tools/call","params":{` + meta + `,"name":"echo"}}`, false},
		{"no jsonrpc", `{"id":72,"method":"tools/call","params":{` + meta + `,"name":"echo"}}`, false},
		{"escaped method", `{"jsonrpc":"2.0","id":73,"method":"tools\/call","params":{` + meta + `,"name":"echo"}}`, false},
		{"params array", `{"jsonrpc":"2.0","id":74,"method":"tools/call","params":["tools/call"]}`, false},
		{"malformed", `{"jsonrpc":"2.0","id":75,"method":"tools/call","params":{` + meta + `,"name":"echo",}}`, false},
		{"trailing garbage", tcall("76", "echo", `{}`) + ` x`, false},
		{"unknown tool", tcall("77", "nope", `{}`), false},
		{"foreign tool", tcall("78", "noop", `{}`), false},
		{"name not a string", `{"jsonrpc":"2.0","id":79,"method":"tools/call","params":{` + meta + `,"name":5}}`, false},
		// Not tools/call.
		{"tools/list", `{"jsonrpc":"2.0","id":80,"method":"tools/list","params":{` + meta + `}}`, false},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, false},
	}
	// Earlier protocol versions (last, so that the stdio session has its
	// client's info from the calls above, as after initialize).
	return append(cases, []corpusCase{
		{"legacy select1", lcall("110", "run_select", sel1), true},
		{"legacy params", lcall("111", "run_select", `{"sql":"SELECT $1::int, $2::text","params":[1,"a<b"]}`), true},
		{"legacy json format", lcall("112", "run_select", `{"sql":"SELECT 1 AS a, 'x' AS b","format":"json"}`), true},
		{"legacy truncated", lcall("113", "run_select", `{"sql":"SELECT g FROM generate_series(1, 10) g ORDER BY g","max_rows":3}`), true},
		{"legacy refusal", lcall("114", "run_select", `{"sql":"DELETE FROM shop.orders"}`), true},
		{"legacy query error", lcall("115", "run_select", `{"sql":"SELECT 1/0"}`), true},
		{"legacy missing sql", lcall("116", "run_select", `{}`), true},
		{"legacy describe", lcall("117", "describe_table", `{"name":"shop.orders"}`), true},
		{"legacy list_tables", lcall("118", "list_tables", `{"schema":"shop"}`), true},
		{"legacy explain", lcall("119", "explain_query", sel1), true},
		{"legacy echo", lcall("120", "echo", `{"n":12345678901234567890}`), true},
		{"legacy id string", lcall(`"l<1>"`, "echo", `{}`), true},
		{"legacy boom", lcall("121", "boom", `{}`), true},
		{"legacy no result", lcall("122", "nothing", `{}`), true},
		{"legacy rich result", lcall("123", "rich", `{}`), true},
		{"legacy no arguments", `{"jsonrpc":"2.0","id":124,"method":"tools/call","params":{"name":"echo"}}`, true},
		{"legacy progressToken", callMeta("125", "echo", `{}`, `{"progressToken":"p1"}`), true},
		{"legacy empty meta", callMeta("126", "echo", `{}`, `{}`), true},
		{"legacy meta version", callMeta("127", "echo", `{}`, `{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}`), false},
		{"legacy traceparent", callMeta("128", "echo", `{}`, `{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`), false},
		{"legacy task", `{"jsonrpc":"2.0","id":129,"method":"tools/call","params":{"name":"echo","arguments":{},"task":{}}}`, false},
		{"legacy params extra", `{"jsonrpc":"2.0","id":130,"method":"tools/call","params":{"name":"echo","arguments":{},"x":1}}`, false},
		{"legacy unknown tool", lcall("131", "nope", `{}`), false},
		{"legacy foreign tool", lcall("132", "noop", `{}`), false},
		{"legacy id 16 digits", lcall("1234567890123456", "echo", `{}`), false},
	}...)
}

// gather returns the tool calls' counters and histogram counts of m by
// name and labels (not the pool's gauges: the tests' Metrics has no pool).
func gather(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.calls, m.errors, m.refusals, m.limited, m.latency)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "mcpg_tool") {
			continue
		}
		for _, mt := range mf.GetMetric() {
			k := mf.GetName() + labels(mt.GetLabel())
			switch {
			case mt.Counter != nil:
				out[k] = mt.Counter.GetValue()
			case mt.Histogram != nil:
				out[k] = float64(mt.Histogram.GetSampleCount())
			}
		}
	}
	return out
}

func labels(ls []*dto.LabelPair) string {
	var b strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&b, ",%s=%s", l.GetName(), l.GetValue())
	}
	return b.String()
}

// delta is after - before for the keys that changed.
func delta(before, after map[string]float64) map[string]float64 {
	d := map[string]float64{}
	for k, v := range after {
		if v != before[k] {
			d[k] = v - before[k]
		}
	}
	return d
}

// auditPairs closes the auditor and returns its records with their time
// and duration cleared.
func auditPairs(t *testing.T, a *Auditor, buf *bytes.Buffer) []AuditRecord {
	t.Helper()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	var out []AuditRecord
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var r AuditRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		r.Time, r.DurNS = time.Time{}, 0
		out = append(out, r)
	}
	return out
}

// TestFastPathInProcess sends the corpus through HandleMessage and the fast
// path: the replies must be identical, byte for byte, and so must what the
// tool saw, the audit record and the metrics of each call.
func TestFastPathInProcess(t *testing.T) {
	m := NewMetrics(nil, nil)
	var auditBuf bytes.Buffer
	a := NewAuditor(&auditBuf, 0)
	fs := newFastServer(t, Config{Metrics: m, Audit: a})
	ctx := context.Background()
	cases := corpus()
	// The next page of a truncated result, with the cursor mcp-go issued.
	first, _ := json.Marshal(fs.s.HandleMessage(ctx, []byte(tcall("90", "run_select", `{"sql":"SELECT g FROM generate_series(1, 10) g ORDER BY g","max_rows":3}`))))
	cur := regexp.MustCompile(`cursor: ([A-Za-z0-9_.-]+)`).FindSubmatch(first)
	if cur == nil {
		t.Fatalf("no cursor in %s", first)
	}
	cases = append(cases, corpusCase{"next page", tcall("91", "run_select", `{"sql":"SELECT g FROM generate_series(1, 10) g ORDER BY g","max_rows":3,"cursor":"`+string(cur[1])+`"}`), true})
	calls := 1         // the first page
	var pairs [][2]int // the audit records of both paths of each fast case
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := gather(t, m)
			seen := len(fs.seen)
			want, err := json.Marshal(fs.s.HandleMessage(ctx, []byte(c.msg)))
			if err != nil {
				t.Fatal(err)
			}
			mid := gather(t, m)
			if len(delta(before, mid)) > 0 {
				calls++
			}
			got, ok := fs.f.handle(ctx, fs.s, []byte(c.msg))
			if ok != c.fast {
				t.Fatalf("fast path took it: %v, want %v (mcp-go: %s)", ok, c.fast, want)
			}
			if !ok {
				return
			}
			pairs = append(pairs, [2]int{calls - 1, calls})
			calls++
			if !bytes.Equal(got, want) {
				t.Fatalf("replies differ\nfast:   %s\nmcp-go: %s", got, want)
			}
			if d1, d2 := delta(before, mid), delta(mid, gather(t, m)); !reflect.DeepEqual(d1, d2) {
				t.Errorf("metrics differ: fast %v, mcp-go %v", d2, d1)
			}
			if len(fs.seen) > seen {
				if len(fs.seen) != seen+2 {
					t.Fatalf("echo ran %d times", len(fs.seen)-seen)
				}
				if w, g := fs.seen[seen], fs.seen[seen+1]; !reflect.DeepEqual(w, g) {
					t.Errorf("the tool saw\nfast:   %+v\nmcp-go: %+v", g, w)
				}
			}
		})
	}
	recs := auditPairs(t, a, &auditBuf)
	if len(recs) != calls {
		t.Fatalf("%d audit records, want %d", len(recs), calls)
	}
	for _, p := range pairs {
		if w, g := recs[p[0]], recs[p[1]]; !reflect.DeepEqual(w, g) {
			t.Errorf("audit records differ\nfast:   %+v\nmcp-go: %+v", g, w)
		}
	}
	if n := fs.f.served.Load(); n == 0 {
		t.Error("the fast path served nothing")
	}
}

// TestFastPathTimeoutAndRateLimit compares a statement timeout, and a
// rate-limited call (whose retry time may differ by a millisecond).
func TestFastPathTimeoutAndRateLimit(t *testing.T) {
	ctx := context.Background()
	digits := regexp.MustCompile(`[0-9]+ms`)
	compare := func(fs *fastServer, args string) {
		t.Helper()
		msg := []byte(tcall("1", "run_select", args))
		want, _ := json.Marshal(fs.s.HandleMessage(ctx, msg))
		got, ok := fs.f.handle(ctx, fs.s, msg)
		if !ok {
			t.Fatal("not on the fast path")
		}
		if g, w := digits.ReplaceAll(got, []byte("Nms")), digits.ReplaceAll(want, []byte("Nms")); !bytes.Equal(g, w) {
			t.Errorf("replies differ\nfast:   %s\nmcp-go: %s", got, want)
		}
	}
	verdicts := func(fs *fastServer) []string {
		var v []string
		for _, r := range auditPairs(t, fs.h.cfg.Audit, fs.audit) {
			v = append(v, r.Verdict)
		}
		return v
	}
	timeout := newFastServer(t, Config{StatementTimeout: 100 * time.Millisecond})
	compare(timeout, `{"sql":"SELECT * FROM public.slow_view"}`)
	if v := verdicts(timeout); !reflect.DeepEqual(v, []string{"error", "error"}) {
		t.Errorf("timeout verdicts %v", v)
	}
	limited := newFastServer(t, Config{RateLimit: 0.001})
	if _, ok := limited.f.handle(ctx, limited.s, []byte(tcall("0", "run_select", `{"sql":"SELECT 1"}`))); !ok {
		t.Fatal("not on the fast path")
	}
	compare(limited, `{"sql":"SELECT 1"}`)
	if v := verdicts(limited); !reflect.DeepEqual(v, []string{"allow", "rate_limited", "rate_limited"}) {
		t.Errorf("rate limit verdicts %v", v)
	}
}

// httpCase is a POST to the endpoint: body, headers (nil: the standard
// ones for body) and whether the fast path must answer it.
type httpCase struct {
	name   string
	body   string
	header http.Header
	fast   bool
}

// modernHeader is what mcp-go's client sends with a 2026-07-28 body.
func modernHeader(body string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	var env struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal([]byte(body), &env) == nil && env.Method != "" {
		h.Set(mcp.HeaderProtocolVersion, mcp.LATEST_PROTOCOL_VERSION)
		for k, v := range mcp.StandardHeaders(mcp.LATEST_PROTOCOL_VERSION, mcp.MCPMethod(env.Method), env.Params) {
			h.Set(k, v)
		}
	}
	return h
}

// legacyInit is a 2025-11-25 client's initialize, which makes mcp-go
// register an HTTP session.
const legacyInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"legacy","version":"1"}}}`

// legacyHeader is what mcp-go's client sends in the session it initialized
// with protocol version 2025-11-25.
func legacyHeader(session string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set(mcp.HeaderProtocolVersion, mcp.LATEST_LEGACY_PROTOCOL_VERSION)
	h.Set(server.HeaderKeySessionID, session)
	return h
}

// httpCorpus is the corpus with the headers of each era (the earlier
// versions' calls in session, which an initialize registered), and cases
// of headers that mcp-go's transport treats otherwise.
func httpCorpus(session string) []httpCase {
	var cs []httpCase
	for _, c := range corpus() {
		var h http.Header
		if c.legacy() {
			h = legacyHeader(session)
		}
		cs = append(cs, httpCase{c.name, c.msg, h, c.fast})
	}
	sel := tcall("100", "run_select", `{"sql":"SELECT 1"}`)
	with := func(f func(h http.Header)) http.Header {
		h := modernHeader(sel)
		f(h)
		return h
	}
	lsel := lcall("140", "run_select", `{"sql":"SELECT 1"}`)
	lwith := func(f func(h http.Header)) http.Header {
		h := legacyHeader(session)
		f(h)
		return h
	}
	cs = append(cs,
		httpCase{"legacy no session", lsel, lwith(func(h http.Header) { h.Del(server.HeaderKeySessionID) }), false},
		httpCase{"legacy bad session", lsel, lwith(func(h http.Header) { h.Set(server.HeaderKeySessionID, "x") }), false},
		httpCase{"legacy unknown session", lsel, lwith(func(h http.Header) {
			h.Set(server.HeaderKeySessionID, "mcp-session-00000000-0000-4000-8000-000000000000")
		}), false},
		httpCase{"legacy no version header", lsel, lwith(func(h http.Header) { h.Del(mcp.HeaderProtocolVersion) }), true},
		httpCase{"legacy older version header", lsel, lwith(func(h http.Header) { h.Set(mcp.HeaderProtocolVersion, "2025-06-18") }), true},
		httpCase{"legacy unknown version header", lsel, lwith(func(h http.Header) { h.Set(mcp.HeaderProtocolVersion, "2099-01-01") }), false},
		httpCase{"legacy modern version header", lsel, lwith(func(h http.Header) { h.Set(mcp.HeaderProtocolVersion, mcp.LATEST_PROTOCOL_VERSION) }), false},
		httpCase{"legacy last event id", lsel, lwith(func(h http.Header) { h.Set(mcp.HeaderLastEventID, "1") }), false},
		httpCase{"legacy text/plain", lsel, lwith(func(h http.Header) { h.Set("Content-Type", "text/plain") }), false},
		httpCase{"legacy traceparent header", lsel, lwith(func(h http.Header) {
			h.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
		}), true},
	)
	return append(cs,
		httpCase{"charset", sel, with(func(h http.Header) { h.Set("Content-Type", "application/json; charset=utf-8") }), true},
		httpCase{"text/plain", sel, with(func(h http.Header) { h.Set("Content-Type", "text/plain") }), false},
		httpCase{"no content type", sel, with(func(h http.Header) { h.Del("Content-Type") }), false},
		httpCase{"no version header", sel, with(func(h http.Header) { h.Del(mcp.HeaderProtocolVersion) }), false},
		httpCase{"other version header", sel, with(func(h http.Header) { h.Set(mcp.HeaderProtocolVersion, "2025-11-25") }), false},
		httpCase{"no method header", sel, with(func(h http.Header) { h.Del(mcp.HeaderMethod) }), false},
		httpCase{"wrong method header", sel, with(func(h http.Header) { h.Set(mcp.HeaderMethod, "tools/list") }), false},
		httpCase{"no name header", sel, with(func(h http.Header) { h.Del(mcp.HeaderName) }), false},
		httpCase{"wrong name header", sel, with(func(h http.Header) { h.Set(mcp.HeaderName, "list_tables") }), false},
		httpCase{"last event id", sel, with(func(h http.Header) { h.Set(mcp.HeaderLastEventID, "1") }), false},
		httpCase{"session header", sel, with(func(h http.Header) { h.Set(server.HeaderKeySessionID, "x") }), true},
		httpCase{"rebinding host", sel, with(func(h http.Header) { h.Set("Host", "evil.example.com") }), false},
		httpCase{"localhost host", sel, with(func(h http.Header) { h.Set("Host", "localhost:1") }), true},
		httpCase{"traceparent", sel, with(func(h http.Header) {
			h.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
		}), true},
	)
}

// TestFastPathHTTP sends every case to mcp-go's handler and to the fast
// path's, on one server: status, headers and body must be the same, and so
// must the audit records (principal included).
func TestFastPathHTTP(t *testing.T) {
	var auditBuf bytes.Buffer
	a := NewAuditor(&auditBuf, 0)
	m := NewMetrics(nil, nil)
	fs := newFastServer(t, Config{Audit: a, Metrics: m})
	opts := HTTPOptions{Token: "s3cret"}
	fast := httptest.NewServer(newHTTPHandler(fs.s, opts, fs.f))
	defer fast.Close()
	slow := httptest.NewServer(newHTTPHandler(fs.s, opts, nil))
	defer slow.Close()
	post := func(url string, c httpCase) (*http.Response, []byte) {
		req, err := http.NewRequest("POST", url+EndpointPath, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		h := c.header
		if h == nil {
			h = modernHeader(c.body)
		}
		for k, v := range h {
			req.Header[k] = v
		}
		if host := h.Get("Host"); host != "" {
			req.Host = host
		}
		req.Header.Set("Authorization", "Bearer s3cret")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, body
	}
	// A 2025-11-25 session, initialized through mcp-go as a client would.
	res, _ := post(slow.URL, httpCase{"initialize", legacyInit, http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}, false})
	session := res.Header.Get(server.HeaderKeySessionID)
	if res.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d, session %q", res.StatusCode, session)
	}
	if res, body := post(slow.URL, httpCase{"initialized", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, legacyHeader(session), false}); res.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", res.StatusCode, body)
	}
	calls := 0
	for _, c := range httpCorpus(session) {
		t.Run(c.name, func(t *testing.T) {
			before := gather(t, m)
			wres, want := post(slow.URL, c)
			mid := gather(t, m)
			served := fs.f.served.Load()
			seen := len(fs.seen)
			gres, got := post(fast.URL, c)
			if took := fs.f.served.Load() > served; took != c.fast {
				t.Fatalf("fast path took it: %v, want %v (mcp-go: %d %s)", took, c.fast, wres.StatusCode, want)
			}
			if d1, d2 := delta(before, mid), delta(mid, gather(t, m)); !reflect.DeepEqual(d1, d2) {
				t.Errorf("metrics differ: fast %v, mcp-go %v", d2, d1)
			} else if len(d1) > 0 {
				calls += 2
			}
			if gres.StatusCode != wres.StatusCode || !bytes.Equal(got, want) {
				t.Fatalf("replies differ\nfast:   %d %s\nmcp-go: %d %s", gres.StatusCode, got, wres.StatusCode, want)
			}
			// The echo tool saw the same session, client and request.
			if len(fs.seen) > seen {
				if w, g := fs.seen[seen-1], fs.seen[seen]; !reflect.DeepEqual(w, g) {
					t.Errorf("the tool saw\nfast:   %+v\nmcp-go: %+v", g, w)
				} else if c.header != nil && c.header.Get(server.HeaderKeySessionID) != "" && g.ClientInfo.Name != "legacy" {
					t.Errorf("the tool saw no initialized session: %+v", g)
				}
			}
			gres.Header.Del("Date")
			wres.Header.Del("Date")
			if !reflect.DeepEqual(gres.Header, wres.Header) {
				t.Errorf("headers differ\nfast:   %v\nmcp-go: %v", gres.Header, wres.Header)
			}
		})
	}
	recs := auditPairs(t, a, &auditBuf)
	if len(recs) != calls {
		t.Fatalf("%d audit records, want %d", len(recs), calls)
	}
	for i := 0; i+1 < len(recs); i += 2 {
		if !reflect.DeepEqual(recs[i], recs[i+1]) {
			t.Errorf("audit records differ:\nmcp-go: %+v\nfast:   %+v", recs[i], recs[i+1])
		}
		if recs[i].Principal != PrincipalToken {
			t.Errorf("principal %q", recs[i].Principal)
		}
	}
}

// TestFastPathHTTPCancel cancels a slow call on the fast path with a
// notifications/cancelled POST, as mcp-go cancels its own, in both eras.
func TestFastPathHTTPCancel(t *testing.T) {
	fs := newFastServer(t, Config{})
	ts := httptest.NewServer(NewHTTPHandler(fs.s, HTTPOptions{}))
	defer ts.Close()
	post := func(body string, h http.Header) (*http.Response, string) {
		req, _ := http.NewRequest("POST", ts.URL+EndpointPath, strings.NewReader(body))
		req.Header = h
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	res, _ := post(legacyInit, http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}})
	session := res.Header.Get(server.HeaderKeySessionID)
	for _, era := range []struct {
		name         string
		call, cancel string
		header       func(string) http.Header
		key          string
	}{
		{"2026-07-28", tcall(`"slow"`, "run_select", `{"sql":"SELECT * FROM public.slow_view"}`),
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{` + meta + `,"requestId":"slow","reason":"test"}}`,
			modernHeader, ":slow"},
		{"2025-11-25", lcall(`"slow"`, "run_select", `{"sql":"SELECT * FROM public.slow_view"}`),
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"test"}}`,
			func(string) http.Header { return legacyHeader(session) }, session + ":slow"},
	} {
		done := make(chan string)
		served := fs.f.served.Load()
		go func() {
			_, b := post(era.call, era.header(era.call))
			done <- b
		}()
		start := time.Now()
		for {
			if _, ok := fs.f.inflight.Load(era.key); ok {
				break
			}
			if time.Since(start) > 10*time.Second {
				t.Fatalf("%s: the call never started", era.name)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if res, b := post(era.cancel, era.header(era.cancel)); res.StatusCode != http.StatusAccepted {
			t.Fatalf("%s: cancel: %d %s", era.name, res.StatusCode, b)
		}
		select {
		case b := <-done:
			if !strings.Contains(b, `"isError":true`) || !strings.Contains(b, "cancel") {
				t.Errorf("%s: reply %s", era.name, b)
			}
		case <-time.After(2 * time.Second): // the view sleeps 3 s
			t.Fatalf("%s: the call was not cancelled", era.name)
		}
		if fs.f.served.Load() != served+1 {
			t.Errorf("%s: the call did not take the fast path", era.name)
		}
	}
}

// stdioRun serves s on stdio with fast (nil: mcp-go alone), sends lines one
// at a time, and returns the reply to each (one line, or "" for lines that
// expect none).
func stdioRun(t *testing.T, s *server.MCPServer, fast *fastPath, lines []string, replies []bool) []string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errLog bytes.Buffer
	served := make(chan error, 1)
	go func() {
		served <- serveStdio(context.Background(), s, fast, inR, outW, log.New(&errLog, "", 0))
		outW.Close()
	}()
	out := bufio.NewReader(outR)
	got := make([]string, len(lines))
	for i, l := range lines {
		if _, err := io.WriteString(inW, l+"\n"); err != nil {
			t.Fatal(err)
		}
		if replies[i] {
			r, err := out.ReadString('\n')
			if err != nil {
				t.Fatalf("line %d: %v", i, err)
			}
			got[i] = r
		}
	}
	inW.Close()
	if rest, _ := io.ReadAll(out); len(rest) > 0 {
		t.Errorf("unexpected output %s", rest)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	return got
}

// TestFastPathStdio sends the corpus over stdio to mcp-go's StdioServer
// alone and with the fast path in front: the same replies, in order.
func TestFastPathStdio(t *testing.T) {
	fs := newFastServer(t, Config{})
	ctx := context.Background()
	var lines []string
	var replies []bool
	for _, c := range corpus() {
		if strings.ContainsAny(c.msg, "\r\n") {
			continue // one line per message on stdio
		}
		lines = append(lines, c.msg)
		r, _ := json.Marshal(fs.s.HandleMessage(ctx, []byte(c.msg)))
		replies = append(replies, string(r) != "null")
	}
	lines = append(lines, "", "not json", `{"jsonrpc":"2.0","id":200,"method":"ping"}`)
	replies = append(replies, true, true, true)
	want := stdioRun(t, fs.s, nil, lines, replies)
	before := fs.f.served.Load()
	got := stdioRun(t, fs.s, fs.f, lines, replies)
	if fs.f.served.Load() == before {
		t.Error("the fast path served nothing on stdio")
	}
	for i := range lines {
		if got[i] != want[i] {
			t.Errorf("%s\nfast:   %s\nmcp-go: %s", lines[i], got[i], want[i])
		}
	}
	// The echo tool saw the stdio session, with the client's info.
	for _, e := range fs.seen {
		if e.Session != "stdio" {
			continue
		}
		if e.ClientInfo.Name == "" {
			t.Errorf("stdio session without client info: %+v", e)
		}
	}
}

// TestFastPathStdioCancel cancels a call in flight on each path with
// notifications/cancelled, and ends input with one in flight (mcp-go
// cancels it): the replies must match.
func TestFastPathStdioCancel(t *testing.T) {
	fs := newFastServer(t, Config{})
	for _, fast := range []*fastPath{nil, fs.f} {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		served := make(chan error, 1)
		go func() {
			served <- serveStdio(context.Background(), fs.s, fast, inR, outW, log.New(io.Discard, "", 0))
			outW.Close()
		}()
		io.WriteString(inW, tcall("1", "run_select", `{"sql":"SELECT * FROM public.slow_view"}`)+"\n")
		time.Sleep(300 * time.Millisecond)
		io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`+"\n")
		out := bufio.NewReader(outR)
		start := time.Now()
		r, err := out.ReadString('\n')
		if err != nil || time.Since(start) > 2*time.Second || !strings.Contains(r, "cancel") {
			t.Errorf("fast %v: cancelled reply %q, %v", fast != nil, r, err)
		}
		io.WriteString(inW, tcall("2", "run_select", `{"sql":"SELECT * FROM public.slow_view"}`)+"\n")
		time.Sleep(300 * time.Millisecond)
		inW.Close()
		r, err = out.ReadString('\n')
		if err != nil || !strings.Contains(r, "cancel") {
			t.Errorf("fast %v: reply at end of input %q, %v", fast != nil, r, err)
		}
		if err := <-served; err != nil {
			t.Error(err)
		}
	}
}

// TestFastPathStdioPanic: a panicking tool gets mcp-go's internal-error
// reply on both paths.
func TestFastPathStdioPanic(t *testing.T) {
	fs := newFastServer(t, Config{})
	fs.s.AddTool(mcp.NewTool("panic"), fs.h.tool("panic", func(context.Context, mcp.CallToolRequest, *outcome) (*mcp.CallToolResult, error) {
		panic("oops")
	}))
	line := tcall("1", "panic", `{}`)
	want := stdioRun(t, fs.s, nil, []string{line}, []bool{true})
	got := stdioRun(t, fs.s, fs.f, []string{line}, []bool{true})
	if got[0] != want[0] || !strings.Contains(got[0], "internal panic: oops") {
		t.Errorf("fast %s, mcp-go %s", got[0], want[0])
	}
}

// TestFastPathOnlyForNew: a server New did not build, or built with
// DisableFastPath, has no fast path, and the registry forgets collected
// servers.
func TestFastPathOnlyForNew(t *testing.T) {
	if fastPathOf(server.NewMCPServer("x", "1")) != nil {
		t.Error("a foreign server has a fast path")
	}
	srv, _ := newPoolServer(t, Config{DisableFastPath: true}, 1)
	if fastPathOf(srv) != nil {
		t.Error("DisableFastPath left a fast path")
	}
	srv, _ = newPoolServer(t, Config{}, 1)
	if fastPathOf(srv) == nil {
		t.Error("no fast path")
	}
	// Every tool New registers is one the fast path recognises.
	for name, st := range srv.ListTools() {
		if reflect.ValueOf(st.Handler).Pointer() != toolCode {
			t.Errorf("tool %s: handler not recognised", name)
		}
		if len(mcp.ExtractParamHeaderBindings(&st.Tool)) > 0 {
			t.Errorf("tool %s has parameter headers", name)
		}
	}
}

// TestFastPathServesMCPGoClients: the requests of mcp-go's own client, on
// stdio, in process and on HTTP, are ones the fast path answers, with both
// the 2026-07-28 protocol and the latest before it (which the official
// TypeScript SDK speaks).
func TestFastPathServesMCPGoClients(t *testing.T) {
	for _, v := range []string{mcp.LATEST_PROTOCOL_VERSION, mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
		t.Run(v, func(t *testing.T) { servesMCPGoClients(t, v) })
	}
}

func servesMCPGoClients(t *testing.T, version string) {
	fs := newFastServer(t, Config{})
	ctx := context.Background()
	// mcp-go's stdio session is one per process: one stdio server at a
	// time, stopped before the next subtest's starts.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	sctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		serveStdio(sctx, fs.s, fs.f, inR, outW, log.New(io.Discard, "", 0))
	}()
	defer func() { stop(); inW.Close(); outW.Close(); <-done }()
	ts := httptest.NewServer(NewHTTPHandler(fs.s, HTTPOptions{}))
	defer ts.Close()
	hc, err := client.NewStreamableHttpClient(ts.URL + EndpointPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    *client.Client
		fast bool
	}{
		{"stdio", client.NewClient(transport.NewIO(outR, inW, io.NopCloser(strings.NewReader("")))), true},
		{"in-process", NewInProcessClient(fs.s), true},
		{"http", hc, true},
	} {
		c := startVersion(t, tc.c, version)
		before := fs.f.served.Load()
		var req mcp.CallToolRequest
		req.Params.Name = "run_select"
		req.Params.Arguments = map[string]any{"sql": "SELECT 1"}
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError || len(res.Content) != 1 {
			t.Fatalf("%s: %v %+v", tc.name, err, res)
		}
		if text := res.Content[0].(mcp.TextContent).Text; !strings.HasPrefix(text, "?column?") {
			t.Errorf("%s: result %q", tc.name, text)
		}
		if took := fs.f.served.Load() == before+1; took != tc.fast {
			t.Errorf("%s: fast path took mcp-go's client's call: %v, want %v", tc.name, took, tc.fast)
		}
		c.Close()
	}
}

// TestFastPathParamHeadersCached: whether a tool binds parameters to
// headers is worked out once per schema, and a new schema under the same
// name is worked out again.
func TestFastPathParamHeadersCached(t *testing.T) {
	var f fastPath
	plain := mcp.NewTool("t", mcp.WithString("sql"))
	bound := mcp.NewToolWithRawSchema("t", "", json.RawMessage(
		`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`))
	if len(mcp.ExtractParamHeaderBindings(&bound)) != 1 {
		t.Fatal("the bound schema has no binding")
	}
	for range 2 {
		copied := plain // as GetTool returns it: a copy sharing the maps
		if f.hasParamHeaders(&copied) {
			t.Error("plain schema: has headers")
		}
		if !f.hasParamHeaders(&bound) {
			t.Error("bound schema: no headers")
		}
	}
	n := 0
	f.paramHeaders.Range(func(any, any) bool { n++; return true })
	if n != 2 {
		t.Errorf("%d cache entries, want 2", n)
	}
}

// TestIDKey: idKey is fmt's "%s:%v" for every id JSON decodes to.
func TestIDKey(t *testing.T) {
	for _, id := range []any{"", "abc", "é\n", 0.0, 7.0, -7.0, 1.5, 123456789012345.0, 1e21, 1e-7, true, nil, map[string]any{"a": 1.0}, []any{1.0}} {
		for _, s := range []string{"", "stdio", "mcp-session-1"} {
			if got, want := idKey(s, id), fmt.Sprintf("%s:%v", s, id); got != want {
				t.Errorf("idKey(%q, %#v) = %q, want %q", s, id, got, want)
			}
		}
	}
}

// TestFastPathHooks: the fast path keeps the server's registered sessions
// through its own hooks, and stands down once anyone adds a hook of
// their own, which mcp-go would then call and the fast path would not.
func TestFastPathHooks(t *testing.T) {
	fs := newFastServer(t, Config{})
	ctx := context.Background()
	c := start(t, NewInProcessClient(fs.s))
	n := 0
	fs.f.sessions.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Fatalf("%d sessions kept, want the in-process client's", n)
	}
	msg := []byte(lcall("1", "run_select", `{"sql":"SELECT 1"}`))
	if _, ok := fs.f.handle(ctx, fs.s, msg); !ok {
		t.Fatal("the fast path did not take a call")
	}
	called := 0
	fs.s.GetHooks().AddBeforeAny(func(context.Context, any, mcp.MCPMethod, any) { called++ })
	if _, ok := fs.f.handle(ctx, fs.s, msg); ok {
		t.Error("the fast path took a call with a foreign hook on the server")
	}
	if out, _ := json.Marshal(fs.s.HandleMessage(ctx, msg)); called != 1 || !bytes.Contains(out, []byte(`"result"`)) {
		t.Errorf("mcp-go: hook called %d times, reply %s", called, out)
	}
	c.Close()
	n = 0
	fs.f.sessions.Range(func(any, any) bool { n++; return true })
	if n != 0 {
		t.Errorf("%d sessions kept after the client closed", n)
	}
}

// TestDecodeID: the fast path's id decoding is encoding/json's, for every
// id plainID lets through.
func TestDecodeID(t *testing.T) {
	for _, id := range []string{"0", "7", "-7", "10", "100", "120", "999999999999999", "-999999999999999", "123456789012345",
		"100000000000000", `""`, `"abc"`, `"\u00e9\n\u2028"`, `"<a&b>"`, `"\ud83d\ude00"`} {
		if !plainID([]byte(id)) {
			t.Fatalf("plainID(%s) = false", id)
		}
		var want any
		if err := json.Unmarshal([]byte(id), &want); err != nil {
			t.Fatal(err)
		}
		wantJSON, _ := json.Marshal(want)
		var c fastCall
		if !decodeID([]byte(id), &c) || c.id != want || string(c.idJSON) != string(wantJSON) {
			t.Errorf("decodeID(%s) = %#v %s, want %#v %s", id, c.id, c.idJSON, want, wantJSON)
		}
	}
}

// valueSession is a session that is not comparable (a struct value with a
// map), as a program embedding mcpg might register.
type valueSession struct {
	id   string
	tags map[string]string
}

func (v valueSession) Initialize()                                         {}
func (v valueSession) Initialized() bool                                   { return true }
func (v valueSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return nil }
func (v valueSession) SessionID() string                                   { return v.id }

// TestFastPathSessionNotComparable: registering and unregistering a
// session of a type that cannot be compared neither panics nor leaves it
// behind.
func TestFastPathSessionNotComparable(t *testing.T) {
	fs := newFastServer(t, Config{})
	ctx := context.Background()
	if err := fs.s.RegisterSession(ctx, valueSession{id: "v1", tags: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	if fs.f.session("v1") == nil {
		t.Fatal("the session was not kept")
	}
	fs.s.UnregisterSession(ctx, "v1")
	if fs.f.session("v1") != nil {
		t.Error("the session was kept after it was unregistered")
	}
}
