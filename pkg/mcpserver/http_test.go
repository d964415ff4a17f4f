package mcpserver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/qpkit/qpkit/pkg/pgexec"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// httpClient returns an initialized streamable HTTP client of ts sending
// headers.
func httpClient(t *testing.T, ts *httptest.Server, headers map[string]string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(ts.URL+EndpointPath, transport.WithHTTPHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	return start(t, c)
}

func TestHTTPToolsWithToken(t *testing.T) {
	var buf bytes.Buffer
	a := NewAuditor(&buf, 0)
	ts := httptest.NewServer(NewHTTPHandler(newServer(t, Config{Audit: a}), HTTPOptions{Token: "s3cret"}))
	defer ts.Close()
	c := httpClient(t, ts, map[string]string{"Authorization": "Bearer s3cret"})
	tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) < 4 {
		t.Errorf("%d tools", len(tools.Tools))
	}
	text, isErr := call(t, c, "run_select", map[string]any{"sql": "SELECT count(*) FROM shop.customers"})
	if isErr || parseTSV(t, text).Rows[0][0] != "300" {
		t.Errorf("run_select over HTTP: %v %s", isErr, text)
	}
	recs := auditRecords(t, a, &buf)
	// The 2026 protocol has no sessions, so Session may be empty.
	if len(recs) != 1 || recs[0].Principal != PrincipalToken || recs[0].Verdict != VerdictAllow {
		t.Errorf("audit over HTTP: %+v", recs)
	}
}

// post sends an initialize request with headers and returns the response.
func post(t *testing.T, ts *httptest.Server, headers map[string]string) *http.Response {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	req, err := http.NewRequest("POST", ts.URL+EndpointPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

func TestHTTPAuth(t *testing.T) {
	ts := httptest.NewServer(NewHTTPHandler(newServer(t, Config{}), HTTPOptions{Token: "s3cret"}))
	defer ts.Close()
	for _, h := range []map[string]string{nil, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret"}} {
		res := post(t, ts, h)
		if res.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%v: status %d, WWW-Authenticate %q", h, res.StatusCode, res.Header.Get("WWW-Authenticate"))
		}
	}
	if res := post(t, ts, map[string]string{"Authorization": "Bearer s3cret"}); res.StatusCode != http.StatusOK {
		t.Errorf("with token: status %d", res.StatusCode)
	}
	// The client library surfaces the 401 as an error.
	c, err := client.NewStreamableHttpClient(ts.URL + EndpointPath)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(context.Background(), init); err == nil {
		t.Error("initialize without token succeeded")
	}
}

func TestHTTPOrigin(t *testing.T) {
	ts := httptest.NewServer(NewHTTPHandler(newServer(t, Config{}), HTTPOptions{AllowOrigins: []string{"https://app.example.com"}}))
	defer ts.Close()
	for origin, want := range map[string]int{
		"":                        http.StatusOK,
		"http://localhost:3000":   http.StatusOK,
		"http://127.0.0.1":        http.StatusOK,
		"http://[::1]:8080":       http.StatusOK,
		"https://app.example.com": http.StatusOK,
		"https://evil.example":    http.StatusForbidden,
		"http://localhost.evil":   http.StatusForbidden,
		"null":                    http.StatusForbidden,
	} {
		h := map[string]string{}
		if origin != "" {
			h["Origin"] = origin
		}
		if res := post(t, ts, h); res.StatusCode != want {
			t.Errorf("Origin %q: status %d, want %d", origin, res.StatusCode, want)
		}
	}
}

func TestIsLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:1": true, "[::1]:80": true,
		":8080": false, "0.0.0.0:8080": false, "192.168.1.2:80": false, "example.com:80": false, "nonsense": false,
	} {
		if got := IsLoopbackAddr(addr); got != want {
			t.Errorf("IsLoopbackAddr(%q) = %v", addr, got)
		}
	}
}

func TestHTTPMetrics(t *testing.T) {
	db := pgtest.Shared(t)
	pool, err := pgexec.NewPool(context.Background(), db.URL(), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	m := NewMetrics(pool, NewAuditor(io.Discard, 0))
	ts := httptest.NewServer(NewHTTPHandler(newServer(t, Config{Metrics: m}), HTTPOptions{Token: "t", Metrics: m.Handler()}))
	defer ts.Close()
	c := httpClient(t, ts, map[string]string{"Authorization": "Bearer t"})
	call(t, c, "run_select", map[string]any{"sql": "SELECT 1"})
	call(t, c, "run_select", map[string]any{"sql": "DROP TABLE shop.orders"})
	call(t, c, "run_select", map[string]any{"sql": "SELECT * FROM nope"})
	get := func(token string) (int, string) {
		req, _ := http.NewRequest("GET", ts.URL+"/metrics", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, _ := get(""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without token: %d", code)
	}
	code, body := get("t")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`mcpg_tool_calls_total{tool="run_select",verdict="allow"} 1`,
		`mcpg_tool_calls_total{tool="run_select",verdict="refuse"} 1`,
		`mcpg_tool_refusals_total{tool="run_select"} 1`,
		`mcpg_tool_errors_total{tool="run_select"} 1`,
		`mcpg_tool_call_duration_seconds_count{tool="run_select"} 3`,
		`mcpg_tool_call_duration_seconds_bucket{tool="run_select",le="+Inf"} 3`,
		"mcpg_pool_acquired_conns ", "mcpg_pool_idle_conns ", "mcpg_pool_total_conns ", "mcpg_pool_max_conns 2",
		"mcpg_audit_dropped_total 0", "go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestHTTPCORSOnlyForAdmittedOrigins: a refused origin gets 403 without CORS
// headers, preflight or not; the preflight of an admitted one skips the
// token, nothing else does.
func TestHTTPCORSOnlyForAdmittedOrigins(t *testing.T) {
	h := NewHTTPHandler(newServer(t, Config{}), HTTPOptions{Token: "s3cret", AllowOrigins: []string{"https://app.example.com"}})
	do := func(method, origin string, preflight bool) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, EndpointPath, strings.NewReader(legacyInit))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if preflight {
			req.Header.Set("Access-Control-Request-Method", "POST")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for _, preflight := range []bool{false, true} {
		rec := do(http.MethodOptions, "https://evil.example", preflight)
		if rec.Code != http.StatusForbidden || rec.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("refused origin, preflight %v: %d, Access-Control-Allow-Origin %q", preflight, rec.Code, rec.Header().Get("Access-Control-Allow-Origin"))
		}
	}
	for _, origin := range []string{"https://app.example.com", "http://localhost:3000"} {
		if rec := do(http.MethodOptions, origin, true); rec.Code != http.StatusNoContent ||
			rec.Header().Get("Access-Control-Allow-Origin") != origin || rec.Header().Get("Vary") != "Origin" ||
			!strings.Contains(rec.Header().Get("Access-Control-Allow-Headers"), "mcp-session-id") {
			t.Errorf("%s: preflight %d %v", origin, rec.Code, rec.Header())
		}
		// Without the token: 401, readable by the page, whatever the method.
		for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			if rec := do(method, origin, true); rec.Code != http.StatusUnauthorized ||
				rec.Header().Get("Access-Control-Allow-Origin") != origin {
				t.Errorf("%s: %s without the token: %d %v", origin, method, rec.Code, rec.Header())
			}
		}
		// An OPTIONS that is no preflight is no exception either.
		if rec := do(http.MethodOptions, origin, false); rec.Code != http.StatusUnauthorized {
			t.Errorf("%s: OPTIONS without Access-Control-Request-Method: %d", origin, rec.Code)
		}
	}
	// No Origin, no CORS.
	if rec := do(http.MethodOptions, "", true); rec.Code != http.StatusUnauthorized || rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("no Origin: %d %v", rec.Code, rec.Header())
	}
}
