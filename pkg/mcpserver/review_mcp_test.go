// MCP server behaviour checked by a review of 2026-12-05; where a test's
// comment names a fault, it is what the code did before the fix.

package mcpserver

// Review of the MCP/transport/execution layer. Each TestMCPReview* test
// asserts the correct behaviour; the ones that document bugs fail today.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mark3labs/mcp-go/server"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// rvPost posts body to ts's MCP endpoint with headers h (default: JSON
// content type and the Accept header the spec requires).
func rvPost(t *testing.T, ts *httptest.Server, body string, h http.Header) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", ts.URL+EndpointPath, strings.NewReader(body))
	if h == nil {
		h = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	}
	req.Header = h
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// rvSession initializes a 2025-11-25 session over HTTP and returns its ID.
func rvSession(t *testing.T, ts *httptest.Server) string {
	t.Helper()
	res, b := rvPost(t, ts, legacyInit, nil)
	id := res.Header.Get(server.HeaderKeySessionID)
	if res.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %q %s", res.StatusCode, id, b)
	}
	return id
}

// rvActive counts active backends whose query text contains marker.
func rvActive(t *testing.T, marker string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), pgtest.Shared(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(),
		`SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%'||$1||'%' AND pid <> pg_backend_pid()`,
		marker).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// rvResult decodes a JSON-RPC tools/call reply into its text and isError.
func rvResult(t *testing.T, body string) (text string, isError bool, rpcErr *struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}) {
	t.Helper()
	var r struct {
		Result *struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("reply is not JSON: %v: %s", err, body)
	}
	if r.Error != nil {
		return "", false, r.Error
	}
	if r.Result == nil || len(r.Result.Content) != 1 {
		t.Fatalf("reply has no single text content: %s", body)
	}
	return r.Result.Content[0].Text, r.Result.IsError, nil
}

// BUG. What is wrong: a DELETE of an HTTP session answers 200 but the
// session is not terminated: mcpg builds mcp-go's transport with
// StatelessGeneratingSessionIdManager (http.go:80), whose Terminate is a
// no-op and whose Validate accepts any well-formed ID, so later requests
// with the deleted session ID are still served (by the fast path, or by
// mcp-go in a session it re-creates).
// Expected (MCP 2025-11-25, basic/transports, "Session Management"): once
// the server has terminated a session it "MUST respond to requests
// containing that session ID with HTTP 404 Not Found"; a server that does
// not terminate on DELETE must answer the DELETE with 405, not 200.
func TestMCPReviewSessionDeleteTerminates(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fastpath=%v", fast), func(t *testing.T) {
			ts := httptest.NewServer(NewHTTPHandler(newServer(t, Config{DisableFastPath: !fast}), HTTPOptions{}))
			defer ts.Close()
			session := rvSession(t, ts)
			req, _ := http.NewRequest("DELETE", ts.URL+EndpointPath, nil)
			req.Header = legacyHeader(session)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode == http.StatusMethodNotAllowed {
				return // termination refused: acceptable per spec
			}
			if res.StatusCode != http.StatusOK {
				t.Fatalf("DELETE: %d", res.StatusCode)
			}
			res2, b := rvPost(t, ts, lcall("7", "run_select", `{"sql":"SELECT 1"}`), legacyHeader(session))
			if res2.StatusCode != http.StatusNotFound {
				t.Errorf("tools/call in a session deleted with 200: status %d, want 404; body %s", res2.StatusCode, b)
			}
		})
	}
}

// BUG. What is wrong: on SIGTERM (Serve's ctx ends) with a call in flight
// that outlives the 10 s shutdown timeout, http.Server.Shutdown times out,
// serveHTTP returns "shutdown: context deadline exceeded" (serve.go:240-241,
// so mcpg exits 3), and nothing cancels the in-flight statement: the
// deferred pool.Close waits for it, so Serve returns only when the
// statement ends (observed ~23 s for a 25 s statement).
// Expected (docs/mcpg.md, "Transports"): "SIGINT/SIGTERM: ... calls in
// flight finish (http.Server.Shutdown, at most 10 s); then the audit log is
// flushed and mcpg exits 0": Serve returns nil within about 10 s and the
// statement is no longer running on the server.
func TestMCPReviewShutdownBounded(t *testing.T) {
	db := pgtest.Shared(t)
	newServer(t, Config{}) // the fixture
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeOptions{Config: Config{AllowFunctions: []string{"pg_sleep"}, StatementTimeout: time.Minute},
			DatabaseURL: db.URL(), PoolSize: 2, HTTPAddr: "127.0.0.1:0", Stderr: &stderr})
	}()
	re := regexp.MustCompile(`serving MCP over HTTP" addr=(\S+)`)
	var addr string
	for deadline := time.Now().Add(30 * time.Second); addr == ""; time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("not serving: %s", stderr.String())
		}
	}
	url := "http://" + addr + EndpointPath
	do := func(body string, h http.Header) *http.Response {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header = h
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	res := do(legacyInit, http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}})
	if res == nil {
		t.Fatal("initialize failed")
	}
	session := res.Header.Get(server.HeaderKeySessionID)
	go do(lcall("1", "run_select", `{"sql":"SELECT pg_sleep(16) AS rv_shutdown_marker"}`), legacyHeader(session))
	for deadline := time.Now().Add(10 * time.Second); rvActive(t, "rv_shutdown_marker") == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the slow call never started")
		}
	}
	t0 := time.Now()
	cancel()
	err := <-done
	took := time.Since(t0)
	if took > shutdownTimeout+2*time.Second {
		t.Errorf("Serve returned %v after the signal, want at most ~%v (docs/mcpg.md)", took.Round(time.Millisecond), shutdownTimeout)
	}
	if err != nil {
		t.Errorf("Serve after a signal: %v, want nil (exit 0)", err)
	}
	if n := rvActive(t, "rv_shutdown_marker"); n != 0 {
		t.Errorf("the in-flight statement is still running after Serve returned")
	}
}

// BUG. What is wrong: a query error's text can span several lines:
// errorText (tools.go:285-315) copies the server's Message/Detail/Hint
// verbatim, and PostgreSQL quotes the offending value in them
// (`invalid input syntax for type integer: "a<LF>b"`), so data from the
// query (or the database) breaks the line.
// Expected (docs/mcpg.md, "Tools"): "Errors are results with isError set
// and one line of text" - newlines escaped (as TSV escapes them) or
// replaced.
func TestMCPReviewErrorTextIsOneLine(t *testing.T) {
	c := newClient(t, Config{})
	text, isErr := call(t, c, "run_select", map[string]any{"sql": `SELECT E'a\nb\rc'::int`})
	if !isErr || !strings.HasPrefix(text, "ERROR 22P02") {
		t.Fatalf("want a 22P02 error, got %v %q", isErr, text)
	}
	if strings.ContainsAny(text, "\n\r") {
		t.Errorf("error text is not one line: %q", text)
	}
}

// BUG. What is wrong: integer params beyond 2^53 are silently changed
// before they are bound: the arguments are decoded into float64 (mcp-go's
// map[string]any, and the fast path's json.Unmarshal of the params), so
// `"params":[9007199254740993]` binds 9007199254740992; a
// `WHERE id = $1` on a bigint key then silently selects another row.
// tools.go:186 takes the already rounded value (the raw arguments,
// CallToolParams' preserved JSON, have the exact digits).
// Expected: the exact value is bound (decode with UseNumber, which
// pgexec accepts as json.Number, docs/pgexec.md "Parameters"), or the call
// is refused with isError; never a different value.
func TestMCPReviewParamsLargeIntegersExact(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fastpath=%v", fast), func(t *testing.T) {
			ts := httptest.NewServer(NewHTTPHandler(newServer(t, Config{DisableFastPath: !fast}), HTTPOptions{}))
			defer ts.Close()
			session := rvSession(t, ts)
			_, b := rvPost(t, ts, lcall("3", "run_select",
				`{"sql":"SELECT $1::int8 AS v","params":[9007199254740993]}`), legacyHeader(session))
			text, isErr, rpcErr := rvResult(t, b)
			if rpcErr != nil || isErr {
				return // refusing the value is acceptable
			}
			if !strings.Contains(text, "\n9007199254740993\n") {
				t.Errorf("param 9007199254740993 bound as another value:\n%s", text)
			}
		})
	}
}

// BUG. What is wrong: arguments of the wrong JSON type are silently
// ignored instead of refused, because the tools read them with mcp-go's
// GetString/RequireInt, which return the default for a non-string and
// truncate floats: "format":5 gives TSV (tools.go:193, although the tool
// refuses unknown formats), "cursor":5 returns the first page again
// (tools.go:214: a client paging with a mangled cursor loops over page 1),
// "max_rows":1.5 is taken as 1, and list_tables' "schema":5 lists every
// schema (catalog.go:140).
// Expected: the tools' input schemas (format: enum string, cursor:
// string, max_rows: integer, schema: string) are enforced: a
// wrong-typed argument gets an isError result naming it (MCP 2025-11-25,
// server/tools "Error Handling": input validation errors are tool
// execution errors), as `"sql":5` already does.
func TestMCPReviewWrongArgumentTypesRefused(t *testing.T) {
	c := newClient(t, Config{})
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"run_select", map[string]any{"sql": "SELECT 1", "format": 5}},
		{"run_select", map[string]any{"sql": "SELECT 1", "cursor": 5}},
		{"run_select", map[string]any{"sql": "SELECT 1", "max_rows": 1.5}},
		{"list_tables", map[string]any{"schema": 5}},
	} {
		if text, isErr := call(t, c, tc.tool, tc.args); !isErr {
			t.Errorf("%s %v: accepted, want isError; got %q", tc.tool, tc.args, text)
		}
	}
}

// BUG. What is wrong: invalid JSON-RPC requests are not answered as such
// (all served by mcp-go behind mcpg's handler): a request whose id is null
// gets 202 and no reply at all (taken for a notification), ids that are
// objects or booleans are echoed back with a normal result, and a batch
// (valid JSON) gets -32700 "request body is not valid json".
// Expected: JSON-RPC 2.0 §4: id "MUST contain a String, Number, or NULL
// value"; MCP 2025-11-25 basic "Requests": "Requests MUST include a
// string or integer ID. Unlike base JSON-RPC, the ID MUST NOT be null";
// such requests get -32600 Invalid Request (§5.1), and -32700 is only for
// "Invalid JSON" (§5.1); MCP since 2025-06-18 has no batches, so a batch
// is an Invalid Request too.
func TestMCPReviewInvalidRequestsGetInvalidRequest(t *testing.T) {
	ts := httptest.NewServer(NewHTTPHandler(newServer(t, Config{}), HTTPOptions{}))
	defer ts.Close()
	session := rvSession(t, ts)
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":12,"method":"tools/list"}]`,
	} {
		res, b := rvPost(t, ts, msg, legacyHeader(session))
		var r struct {
			Error *struct{ Code int } `json:"error"`
		}
		if json.Unmarshal([]byte(b), &r) != nil || r.Error == nil || r.Error.Code != -32600 {
			t.Errorf("%s: %d %q, want a -32600 Invalid Request error", msg, res.StatusCode, b)
		}
	}
}

// rvPadReader yields a tools/call whose arguments carry n bytes of padding,
// without holding it in memory; read counts what the server consumed.
type rvPadReader struct {
	head, tail string
	n, off     int
	read       *int
}

func (r *rvPadReader) Read(p []byte) (int, error) {
	total := len(r.head) + r.n + len(r.tail)
	if r.off >= total {
		return 0, io.EOF
	}
	i := 0
	for ; i < len(p) && r.off < total; i++ {
		switch {
		case r.off < len(r.head):
			p[i] = r.head[r.off]
		case r.off < len(r.head)+r.n:
			p[i] = 'x'
		default:
			p[i] = r.tail[r.off-len(r.head)-r.n]
		}
		r.off++
	}
	*r.read += i
	return i, nil
}

// BUG. What is wrong: there is no request size limit on HTTP: the fast
// path (fastpath_http.go:38) and mcp-go both io.ReadAll the whole body and
// then decode it, so one POST of any size is held (several times) in
// memory; here a 48 MiB tools/call is read to the end and served.
// Expected: the largest meaningful request is a 64 KiB statement
// (safesql's MaxLength) plus its params, so the body should be bounded
// (http.MaxBytesReader, a few MiB) and an oversized request refused with
// 413 Request Entity Too Large without reading it all.
func TestMCPReviewHTTPBodyLimit(t *testing.T) {
	ts := httptest.NewServer(NewHTTPHandler(newServer(t, Config{}), HTTPOptions{}))
	defer ts.Close()
	session := rvSession(t, ts)
	read := 0
	body := &rvPadReader{
		head: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run_select","arguments":{"sql":"SELECT 1","pad":"`,
		n:    48 << 20, tail: `"}}}`, read: &read,
	}
	req, _ := http.NewRequest("POST", ts.URL+EndpointPath, body)
	req.Header = legacyHeader(session)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Logf("client error (server closed early?): %v", err)
		return
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 300))
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("48 MiB request: status %d (server read %d bytes), want 413; body %s", res.StatusCode, read, b)
	}
}

// PASSES. A client that disconnects mid-query stops its statement on the
// server, on the fast path and through mcp-go (docs/mcpg.md "In process":
// "a call whose context ends stops its statement").
func TestMCPReviewDisconnectCancelsStatement(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fastpath=%v", fast), func(t *testing.T) {
			srv := newServer(t, Config{AllowFunctions: []string{"pg_sleep"}, StatementTimeout: time.Minute, DisableFastPath: !fast})
			ts := httptest.NewServer(NewHTTPHandler(srv, HTTPOptions{}))
			defer ts.Close()
			session := rvSession(t, ts)
			marker := fmt.Sprintf("rv_disconnect_%v", fast)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+EndpointPath,
				strings.NewReader(lcall("1", "run_select", `{"sql":"SELECT pg_sleep(20) AS `+marker+`"}`)))
			req.Header = legacyHeader(session)
			go func() {
				if r, err := http.DefaultClient.Do(req); err == nil {
					r.Body.Close()
				}
			}()
			for deadline := time.Now().Add(10 * time.Second); rvActive(t, marker) == 0; time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the call never started")
				}
			}
			cancel()
			deadline := time.Now().Add(5 * time.Second)
			for rvActive(t, marker) != 0 {
				if time.Now().After(deadline) {
					t.Fatal("statement still running 5 s after the client went away")
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// PASSES. Protocol errors vs tool errors: an unknown tool is a JSON-RPC
// error (-32602), a wrong-typed or missing required argument and a bad
// SQL statement are isError results, a wrong jsonrpc version is -32600,
// an unknown method -32601, malformed JSON -32700 with HTTP 400.
func TestMCPReviewProtocolVsToolErrors(t *testing.T) {
	ts := httptest.NewServer(NewHTTPHandler(newServer(t, Config{}), HTTPOptions{}))
	defer ts.Close()
	session := rvSession(t, ts)
	for _, c := range []struct {
		msg     string
		code    int  // JSON-RPC error code, 0 for a result
		isError bool // for a result
	}{
		{lcall("1", "nope", `{}`), -32602, false},
		{lcall("2", "run_select", `{"sql":5}`), 0, true},
		{lcall("3", "run_select", `["SELECT 1"]`), 0, true},
		{lcall("4", "run_select", `{"sql":"SELECT * FROM nope"}`), 0, true},
		{lcall("5", "run_select", `{"sql":"DELETE FROM shop.orders"}`), 0, true},
		{lcall("6", "run_select", `{"sql":"SELECT 1"}`), 0, false},
		{`{"jsonrpc":"1.0","id":7,"method":"tools/list"}`, -32600, false},
		{`{"jsonrpc":"2.0","id":8,"method":"nope/nope"}`, -32601, false},
		{`{bad`, -32700, false},
	} {
		_, b := rvPost(t, ts, c.msg, legacyHeader(session))
		_, isErr, rpcErr := rvResult(t, b)
		switch {
		case c.code != 0 && (rpcErr == nil || rpcErr.Code != c.code):
			t.Errorf("%s: %s, want error %d", c.msg, b, c.code)
		case c.code == 0 && (rpcErr != nil || isErr != c.isError):
			t.Errorf("%s: %s, want a result with isError=%v", c.msg, b, c.isError)
		}
	}
}

// A stdio message over MaxRequestBytes is answered with -32600 and
// skipped without being held in memory; the next message is served. Before
// 2026-12-05 stdio read any line whole (HTTP had no cap either).
func TestStdioLineLimit(t *testing.T) {
	fs := newFastServer(t, Config{})
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", MaxRequestBytes) + `"}}`
	got := stdioRun(t, fs.s, fs.f, []string{big, `{"jsonrpc":"2.0","id":2,"method":"ping"}`}, []bool{true, true})
	var e struct {
		ID    any `json:"id"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(got[0]), &e); err != nil || e.Error == nil || e.Error.Code != -32600 || e.ID != nil {
		t.Errorf("over the limit: %.200s, want a -32600 error with id null", got[0])
	}
	if !strings.Contains(got[1], `"id":2`) || !strings.Contains(got[1], `"result"`) {
		t.Errorf("the next message: %.200s, want its result", got[1])
	}
}
