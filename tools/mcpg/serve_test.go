package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// TestMain lets the test binary act as mcpg in a child process (for the
// stdio test), and otherwise runs the tests with a throwaway PostgreSQL.
func TestMain(m *testing.M) {
	if os.Getenv("MCPG_TEST_AS_MAIN") == "1" {
		main()
	}
	pgtest.Main(m)
}

func TestServeHelpShowsDefaults(t *testing.T) {
	code, out, _ := call(t, "", "serve", "--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"--database-url=URL", "$MCPG_DATABASE_URL",
		"--statement-timeout-ms=30000", "$MCPG_STATEMENT_TIMEOUT_MS",
		"--acquire-timeout-ms=30000", "$MCPG_ACQUIRE_TIMEOUT_MS",
		"--max-rows=100", "$MCPG_MAX_ROWS",
		"--max-bytes=32768", "$MCPG_MAX_BYTES",
		"--pool-size=4", "$MCPG_POOL_SIZE",
		"--allow-function=NAME", "--allow-explain-analyze",
		"--http=ADDR", "$MCPG_HTTP", "--auth-token=TOKEN", "$MCPG_AUTH_TOKEN", "--allow-origin=ORIGIN",
		"--audit-log=PATH", "$MCPG_AUDIT_LOG", "--rate-limit=PER_SEC", "$MCPG_RATE_LIMIT",
		"--no-fast-path", "$MCPG_NO_FAST_PATH",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("serve --help lacks %q:\n%s", want, out)
		}
	}
}

func TestServeUsageErrors(t *testing.T) {
	t.Setenv("MCPG_DATABASE_URL", "")
	os.Unsetenv("MCPG_DATABASE_URL")
	if code, _, errOut := call(t, "", "serve"); code != exitUsage || !strings.Contains(errOut, "--database-url") {
		t.Errorf("no URL: exit %d, %q", code, errOut)
	}
	if code, _, errOut := call(t, "", "serve", "--database-url", "postgres://x/y", "--max-rows", "0"); code != exitUsage || !strings.Contains(errOut, "--max-rows") {
		t.Errorf("max-rows 0: exit %d, %q", code, errOut)
	}
	if code, _, errOut := call(t, "", "serve", "--database-url", "postgres://x/y", "--rate-limit=-1"); code != exitUsage || !strings.Contains(errOut, "rate limit -1 is out of range") {
		t.Errorf("rate-limit -1: exit %d, %q", code, errOut)
	}
	// A database that is down does not stop mcpg from starting (stdin is
	// empty, so it serves nothing and exits), unless --strict-role.
	if code, _, errOut := call(t, "", "serve", "--database-url", "postgres://127.0.0.1:1/none?connect_timeout=2"); code != 0 || !strings.Contains(errOut, "database unreachable at start-up") {
		t.Errorf("unreachable database: exit %d, %q", code, errOut)
	}
	if code, _, errOut := call(t, "", "serve", "--strict-role", "--database-url", "postgres://127.0.0.1:1/none?connect_timeout=2"); code != exitFailure || !strings.Contains(errOut, "database unreachable") {
		t.Errorf("unreachable database, --strict-role: exit %d, %q", code, errOut)
	}
}

// TestServeStdio runs the test binary as "mcpg serve" and talks MCP to it
// over its stdin and stdout, with the fast path and without it.
func TestServeStdio(t *testing.T) {
	for _, noFast := range []string{"0", "1"} {
		t.Run("MCPG_NO_FAST_PATH="+noFast, func(t *testing.T) { testServeStdio(t, "MCPG_NO_FAST_PATH="+noFast) })
	}
}

func testServeStdio(t *testing.T, env string) {
	db := pgtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, info := stdioClient(t, ctx, "MCPG_DATABASE_URL="+db.URL(), "MCPG_MAX_ROWS=3", env)
	if info.ServerInfo.Name != "mcpg" {
		t.Errorf("server name %q", info.ServerInfo.Name)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 5 {
		t.Errorf("%d tools, want 5", len(tools.Tools))
	}
	var req mcp.CallToolRequest
	req.Params.Name = "run_select"
	req.Params.Arguments = map[string]any{"sql": "SELECT g FROM generate_series(1, $1::int) g", "params": []any{10}}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("result %+v", res)
	}
	text := res.Content[0].(mcp.TextContent).Text
	if !strings.HasPrefix(text, "g:int4\n1\n2\n3\n(3 rows, truncated by rows; cursor: ") || !strings.HasSuffix(text, ")") {
		t.Errorf("MCPG_MAX_ROWS=3: got %q", text)
	}
	// Closing stdin ends the server cleanly (exit 0).
	if err := c.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

// TestServeFenceResults: MCPG_FENCE_RESULTS=1 fences run_select's result.
func TestServeFenceResults(t *testing.T) {
	db := pgtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _ := stdioClient(t, ctx, "MCPG_DATABASE_URL="+db.URL(), "MCPG_FENCE_RESULTS=1")
	var req mcp.CallToolRequest
	req.Params.Name = "run_select"
	req.Params.Arguments = map[string]any{"sql": "SELECT 1 AS one"}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(mcp.TextContent).Text
	if res.IsError || !strings.Contains(text, "\n<untrusted-data id=") || !strings.Contains(text, ">\none:int4\n1\n(1 rows)\n</untrusted-data id=") || !strings.Contains(text, "\n</untrusted-data id=") {
		t.Errorf("fenced result: %q", text)
	}
}
