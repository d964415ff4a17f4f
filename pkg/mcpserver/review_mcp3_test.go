// Review of mcpg's MCP server as an MCP client sees it (2026-12-06). Every
// TestMcp3Review test asserts the correct behaviour; each failed on the code
// as reviewed.

package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// explain_query puts "EXPLAIN (FORMAT TEXT) " before the caller's text, so
// a query error's "(at character N)" counts the prefix: it points 22
// characters past the caller's mistake (run_select, which never rewrites
// the text, reports the right character for the same statement).
func TestMcp3ReviewExplainErrorPositionInCallersText(t *testing.T) {
	c := newClient(t, Config{})
	const sql = "SELECT nocol FROM shop.customers"
	want := strings.Index(sql, "nocol") + 1 // PostgreSQL counts from 1
	at := regexp.MustCompile(`\(at character (\d+)\)`)
	for _, tool := range []string{"run_select", "explain_query"} {
		text, isErr := call(t, c, tool, map[string]any{"sql": sql})
		m := at.FindStringSubmatch(text)
		if !isErr || m == nil {
			t.Fatalf("%s: %q, want a query error with a position", tool, text)
		}
		if got, _ := strconv.Atoi(m[1]); got != want {
			t.Errorf("%s: %q: position %d, want %d (where nocol is in the sql given)", tool, text, got, want)
		}
	}
}

// rvm3Init initializes a 2025-11-25 session through h and returns its ID.
func rvm3Init(t *testing.T, h http.Handler) string {
	t.Helper()
	req := httptest.NewRequest("POST", EndpointPath, strings.NewReader(legacyInit))
	req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	id := rec.Header().Get(server.HeaderKeySessionID)
	if rec.Code != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %q %s", rec.Code, id, rec.Body)
	}
	return id
}

// rvm3Registered counts the sessions registered with the server (the fast
// path mirrors mcp-go's MCPServer.sessions through the register hooks).
func rvm3Registered(f *fastPath) int {
	n := 0
	f.sessions.Range(func(any, any) bool { n++; return true })
	return n
}

// A session mcpg forgets (idle 24 h, or evicted as the least recently used
// beyond 10,000) is answered 404 but stays registered in mcp-go's server
// (and in the fast path's map) for ever: only a DELETE unregisters one.
// Clients that just go away (most do) make the server grow without bound.
func TestMcp3ReviewForgottenSessionsAreReleased(t *testing.T) {
	srv := newServer(t, Config{})
	f := fastPathOf(srv)
	h := NewHTTPHandler(srv, HTTPOptions{})
	ids := sessionIDsOf(srv)
	base := rvm3Registered(f)

	// Idle: 25 hours later the session gets 404...
	clock := time.Now()
	ids.mu.Lock()
	ids.now = func() time.Time { return clock }
	ids.mu.Unlock()
	idle := rvm3Init(t, h)
	clock = clock.Add(25 * time.Hour)
	req := httptest.NewRequest("POST", EndpointPath, strings.NewReader(lcall("1", "run_select", `{"sql":"SELECT 1"}`)))
	req.Header = legacyHeader(idle)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotFound {
		t.Fatalf("idle session: %d %s, want 404", rec.Code, rec.Body)
	}
	// ...so nothing may keep it.
	if f.session(idle) != nil {
		t.Errorf("a session answered 404 as idle is still registered with the server")
	}

	// Evicted: 10,000 live sessions at most.
	for range maxSessions + 200 {
		rvm3Init(t, h)
	}
	if n := rvm3Registered(f) - base; n > maxSessions {
		t.Errorf("%d sessions registered with the server after %d initializes, want at most %d (the live ones)",
			n, maxSessions+201, maxSessions)
	}
}

// On stdio, a tools/call waiting in the queue for one of the 5 workers is
// not yet in the in-flight map, so a notifications/cancelled for it is
// dropped: once a worker frees, the cancelled call runs its statement to
// the end and answers with its rows. MCP (basic/utilities/cancellation):
// the receiver SHOULD stop processing the cancelled request and not
// respond; at the least its statement must not run.
func TestMcp3ReviewStdioCancelQueuedCall(t *testing.T) {
	srv, _ := newPoolServer(t, Config{AllowFunctions: []string{"pg_sleep"}}, 6)
	f := fastPathOf(srv)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- serveStdio(context.Background(), srv, f, inR, outW, log.New(io.Discard, "", 0))
		outW.Close()
	}()
	lines := make(chan string, 100)
	go func() {
		br := bufio.NewReader(outR)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- l
		}
	}()
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		inW.Close()
		for range lines {
		}
		<-served
	}()
	send(legacyInit)
	<-lines
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := 1; i <= stdioWorkers; i++ {
		send(lcall(strconv.Itoa(i), "run_select", `{"sql":"SELECT pg_sleep(2)"}`))
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		n := 0
		f.inflight.Range(func(any, any) bool { n++; return true })
		if n == stdioWorkers {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the blocking calls did not start")
		}
	}
	send(lcall("6", "run_select", `{"sql":"SELECT 'zz6 ran' AS x"}`))
	time.Sleep(100 * time.Millisecond)
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6,"reason":"user"}}`)
	for i := 1; i <= stdioWorkers; i++ {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, i))
	}
	timeout := time.After(10 * time.Second)
	for got := 0; got < stdioWorkers+1; got++ {
		select {
		case l := <-lines:
			if strings.Contains(l, `"id":6,`) && strings.Contains(l, "zz6 ran") {
				t.Errorf("the cancelled call ran its statement and answered: %s", l)
			}
		case <-timeout:
			return // no reply to the cancelled call: fine
		}
	}
}

// A JSON number is a number however it is written: 5.0 and 5e0 are 5 (a
// Python client sends json.dumps(5.0) == "5.0"; JSON Schema's "integer"
// accepts 5.0). run_select keeps params as json.Number (args.go) and binds
// their digits verbatim, so "5.0" bound to an integer parameter fails with
// 22P02, where pgexec's own float path writes integral values without
// fraction or exponent precisely "so 3.0 can bind to an integer
// parameter" (params.go, docs/pgexec.md "Parameters").
func TestMcp3ReviewIntegralParamsBindToIntegers(t *testing.T) {
	c := newClient(t, Config{})
	for _, n := range []string{"5", "5.0", "5e0", "0.5e1"} {
		text, isErr := call(t, c, "run_select", map[string]any{
			"sql": "SELECT name FROM shop.customers WHERE id = $1", "params": []any{json.RawMessage(n)}})
		if isErr || !strings.Contains(text, "\nc5\n") {
			t.Errorf("params [%s]: %q, want the row of customer 5", n, text)
		}
	}
}

// --allow-origin admits a web app's Origin, but only a browser sends an
// Origin, and a browser lets a page call another origin only through CORS:
// its preflight (OPTIONS, without the Authorization header) must be
// answered 2xx with Access-Control-Allow-Origin, and the POST's reply must
// allow the origin and expose Mcp-Session-Id. mcpg answers the preflight
// 401 (with a token) or 404 (without: mcp-go has no OPTIONS handler and
// mcpg does not enable WithStreamableHTTPCORS), so no allowed web client
// can ever connect.
func TestMcp3ReviewAllowedOriginCanConnectFromBrowser(t *testing.T) {
	const origin = "https://app.example.com"
	for _, token := range []string{"", "s3cret"} {
		h := NewHTTPHandler(newServer(t, Config{}), HTTPOptions{Token: token, AllowOrigins: []string{origin}})
		req := httptest.NewRequest("OPTIONS", EndpointPath, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type, mcp-protocol-version, mcp-session-id")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code/100 != 2 || rec.Header().Get("Access-Control-Allow-Origin") != origin {
			t.Errorf("token %q: preflight from an allowed origin: %d, Access-Control-Allow-Origin %q; want 2xx allowing %s",
				token, rec.Code, rec.Header().Get("Access-Control-Allow-Origin"), origin)
		}
		req = httptest.NewRequest("POST", EndpointPath, strings.NewReader(legacyInit))
		req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
			"Origin": {origin}}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("token %q: initialize from an allowed origin: %d %s", token, rec.Code, rec.Body)
		}
		if got := rec.Header().Get("Access-Control-Allow-Origin"); got != origin ||
			!strings.Contains(strings.ToLower(rec.Header().Get("Access-Control-Expose-Headers")), "mcp-session-id") {
			t.Errorf("token %q: initialize reply: Access-Control-Allow-Origin %q, Access-Control-Expose-Headers %q; want %s and mcp-session-id exposed",
				token, got, rec.Header().Get("Access-Control-Expose-Headers"), origin)
		}
	}
}

// run_select's params is declared {"type":"array"} without "items". Strict
// tool-schema validators reject the whole tool for that: VS Code Copilot
// ("tool parameters array type must have items") and OpenAI function
// calling / Codex ("array schema missing items"), so run_select, mcpg's
// main tool, cannot be loaded by those clients.
func TestMcp3ReviewArraySchemasHaveItems(t *testing.T) {
	c := newClient(t, Config{})
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		raw, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var schema struct {
			Properties map[string]map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		for name, p := range schema.Properties {
			if p["type"] == "array" && p["items"] == nil {
				t.Errorf("%s.%s: %v has no items", tool.Name, name, p)
			}
		}
	}
}
