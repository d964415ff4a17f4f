package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// syncBuffer is a bytes.Buffer safe to write and read concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serving runs "mcpg serve args..." in-process until the returned stop is
// called; it returns the HTTP address it listens on and stop, which
// returns the exit code and stderr.
func serving(t *testing.T, args ...string) (addr string, stop func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve"}, args...), strings.NewReader(""), &bytes.Buffer{}, stderr)
	}()
	re := regexp.MustCompile(`serving MCP over HTTP" addr=(\S+)`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
			break
		}
		select {
		case code := <-done:
			cancel()
			t.Fatalf("serve exited %d: %s", code, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not start: %s", stderr.String())
		}
	}
	var once sync.Once
	var code int
	stop = func() (int, string) {
		once.Do(func() { cancel(); code = <-done })
		return code, stderr.String()
	}
	t.Cleanup(func() { stop() })
	return addr, stop
}

func TestServeHTTP(t *testing.T) {
	db := pgtest.Shared(t)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	addr, stop := serving(t, "--database-url", db.URL(), "--http", "127.0.0.1:0", "--auth-token", "tok", "--audit-log", audit)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := httpClient(t, ctx, addr, map[string]string{"Authorization": "Bearer tok"})
	var req mcp.CallToolRequest
	req.Params.Name = "run_select"
	req.Params.Arguments = map[string]any{"sql": "SELECT 41 + 1 AS n"}
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(mcp.TextContent).Text, "42") {
		t.Fatalf("run_select: %v %+v", err, res)
	}
	resp, err := http.Post("http://"+addr+"/mcp", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	mreq, _ := http.NewRequest("GET", "http://"+addr+"/metrics", nil)
	mreq.Header.Set("Authorization", "Bearer tok")
	mres, err := http.DefaultClient.Do(mreq)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(mres.Body)
	mres.Body.Close()
	if !strings.Contains(string(body), `mcpg_tool_calls_total{tool="run_select",verdict="allow"} 1`) {
		t.Errorf("/metrics: %d %s", mres.StatusCode, body)
	}
	c.Close()
	// Cancelling the context is what SIGTERM does in main.
	if code, errs := stop(); code != exitOK || !strings.Contains(errs, "shutting down") {
		t.Errorf("shutdown: exit %d, stderr %s", code, errs)
	}
	// The audit log is flushed on shutdown.
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	if rec["type"] != "audit" || rec["principal"] != "token" || rec["verdict"] != "allow" || rec["sql"] != "SELECT 41 + 1 AS n" || rec["rows"] != 1.0 {
		t.Errorf("audit record %s", data)
	}
}

func TestServeHTTPUsage(t *testing.T) {
	t.Setenv("MCPG_AUTH_TOKEN", "")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--http", "0.0.0.0:8080"}, "is not a loopback address: set --auth-token"},
		{[]string{"--http", ":8080"}, "is not a loopback address"},
		{[]string{"--http", "8080"}, "is not host:port"},
		{[]string{"--auth-token", "x"}, "need --http"},
	} {
		code, _, errs := call(t, "", append([]string{"serve", "--database-url", "postgres://x/y"}, c.args...)...)
		if code != exitUsage || !strings.Contains(errs, c.msg) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.msg)
		}
	}
}

// TestServeHTTPDrains stops the server while a call is running: the call
// still gets its result and serve exits 0.
func TestServeHTTPDrains(t *testing.T) {
	db := pgtest.Shared(t)
	addr, stop := serving(t, "--database-url", db.URL(), "--http", "127.0.0.1:0", "--allow-function", "pg_sleep")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := httpClient(t, ctx, addr, nil)
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		var req mcp.CallToolRequest
		req.Params.Name = "run_select"
		req.Params.Arguments = map[string]any{"sql": "SELECT pg_sleep(0.5), 'slept' AS s"}
		res, err := c.CallTool(ctx, req)
		done <- result{res, err}
	}()
	time.Sleep(150 * time.Millisecond) // the call is in flight
	start := time.Now()
	code, errs := stop()
	r := <-done
	if r.err != nil || r.res.IsError || !strings.Contains(r.res.Content[0].(mcp.TextContent).Text, "slept") {
		t.Errorf("in-flight call: %v %+v", r.err, r.res)
	}
	if code != exitOK || time.Since(start) < 200*time.Millisecond {
		t.Errorf("exit %d after %v: %s", code, time.Since(start), errs)
	}
}

// TestServeHTTPSigterm runs the test binary as "mcpg serve --http" and
// stops it with SIGTERM: it exits 0.
func TestServeHTTPSigterm(t *testing.T) {
	db := pgtest.Shared(t)
	cmd := exec.Command(os.Args[0], "serve", "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "MCPG_TEST_AS_MAIN=1", "MCPG_DATABASE_URL="+db.URL())
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(30 * time.Second)
	for !strings.Contains(stderr.String(), "serving MCP over HTTP") {
		select {
		case err := <-exited:
			t.Fatalf("exited early: %v: %s", err, stderr.String())
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("did not start: %s", stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil || !strings.Contains(stderr.String(), "shutting down") {
			t.Errorf("after SIGTERM: %v: %s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("still running 20s after SIGTERM: %s", stderr.String())
	}
}
