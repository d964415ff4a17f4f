package main

// Conformance tests: drive mcpg with the official MCP TypeScript SDK
// (@modelcontextprotocol/sdk) over stdio and Streamable HTTP, and count the
// tokens of the tools/list result with gpt-tokenizer. The npm packages are
// pinned in testdata/npm/package-lock.json and installed once per lockfile
// into a cache directory; node and npm are required.

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/npmtest"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// maxToolsListTokens bounds the size of the tools/list result (o200k tokens)
// that every MCP client puts in its model's context.
const maxToolsListTokens = 1500

// npmPackages returns a directory holding testdata/npm's files and its
// installed node_modules (pkg/npmtest). It fails the test when node or npm
// is missing.
func npmPackages(t *testing.T) string {
	t.Helper()
	return npmtest.Dir(t, filepath.Join("testdata", "npm"))
}

// conformanceDB creates a small table for the tool calls.
func conformanceDB(t *testing.T) *pgtest.Cluster {
	t.Helper()
	db := pgtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, db.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `
		DROP SCHEMA IF EXISTS conformance CASCADE;
		CREATE SCHEMA conformance;
		COMMENT ON SCHEMA conformance IS 'conformance test data';
		CREATE TABLE conformance.items (id int PRIMARY KEY, name text NOT NULL);
		COMMENT ON TABLE conformance.items IS 'things';
		INSERT INTO conformance.items VALUES (1, 'one'), (2, 'two'), (3, 'three');
		ANALYZE conformance.items;`); err != nil {
		t.Fatal(err)
	}
	return db
}

type callSummary struct {
	IsError      bool   `json:"isError"`
	ContentItems int    `json:"contentItems"`
	Text         string `json:"text"`
}

type conformanceSummary struct {
	Server struct {
		Name string `json:"name"`
	} `json:"server"`
	Tools           []string               `json:"tools"`
	ToolsListTokens int                    `json:"toolsListTokens"`
	SchemasOK       bool                   `json:"schemasOK"`
	Calls           map[string]callSummary `json:"calls"`
}

// runConformance runs conformance.mjs with args and returns its summary.
func runConformance(t *testing.T, env []string, args ...string) conformanceSummary {
	t.Helper()
	dir := npmPackages(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join(dir, "conformance.mjs")}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("conformance.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	var s conformanceSummary
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("summary: %v: %s\nstderr: %s", err, out, stderr.String())
	}
	return s
}

// checkSummary asserts what every transport must give.
func checkSummary(t *testing.T, s conformanceSummary) {
	t.Helper()
	if s.Server.Name != "mcpg" {
		t.Errorf("server name %q", s.Server.Name)
	}
	want := []string{"describe_table", "explain_query", "list_schemas", "list_tables", "run_select"}
	if strings.Join(s.Tools, ",") != strings.Join(want, ",") {
		t.Errorf("tools %v, want %v", s.Tools, want)
	}
	if !s.SchemasOK {
		t.Errorf("a tool lacks a description or an object inputSchema")
	}
	if s.ToolsListTokens <= 0 || s.ToolsListTokens > maxToolsListTokens {
		t.Errorf("tools/list is %d tokens, want 1..%d", s.ToolsListTokens, maxToolsListTokens)
	}
	contains := map[string]string{
		"run_select":     "two",
		"list_schemas":   "conformance",
		"list_tables":    "items",
		"describe_table": "name",
		"explain_query":  "Scan",
	}
	for _, name := range want {
		c, ok := s.Calls[name]
		if !ok {
			t.Errorf("%s was not called", name)
			continue
		}
		if c.IsError || c.ContentItems == 0 || !strings.Contains(c.Text, contains[name]) {
			t.Errorf("%s: isError=%v items=%d, want text containing %q: %s", name, c.IsError, c.ContentItems, contains[name], c.Text)
		}
	}
	if r := s.Calls["run_select"].Text; r != "id:int4\tname:text\n1\tone\n2\ttwo\n(2 rows)" {
		t.Errorf("run_select (default format tsv, $1 = 2): %q", r)
	}
	if c := s.Calls["refused"]; !c.IsError || c.Text == "" {
		t.Errorf("DELETE was not refused with isError: %+v", c)
	}
}

func TestConformanceStdio(t *testing.T) {
	db := conformanceDB(t)
	s := runConformance(t, []string{"MCPG_TEST_AS_MAIN=1", "MCPG_DATABASE_URL=" + db.URL()},
		"stdio", os.Args[0], "serve")
	checkSummary(t, s)
	t.Logf("tools/list result: %d tokens (o200k_base, gpt-tokenizer); limit %d", s.ToolsListTokens, maxToolsListTokens)
}

func TestConformanceHTTP(t *testing.T) {
	db := conformanceDB(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(os.Args[0], "serve", "--http", addr, "--auth-token", "T")
	cmd.Env = append(os.Environ(), "MCPG_TEST_AS_MAIN=1", "MCPG_DATABASE_URL="+db.URL())
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	deadline := time.After(30 * time.Second)
	for !strings.Contains(stderr.String(), "serving MCP over HTTP") {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("exited early: %v: %s", err, stderr.String())
		case <-deadline:
			t.Fatalf("did not start: %s", stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	s := runConformance(t, nil, "http", "http://"+addr+"/mcp", "T")
	checkSummary(t, s)
}

// TestInspectorCLIListsTools runs the MCP Inspector's CLI mode
// (@modelcontextprotocol/inspector, which has no --strict flag) against
// "mcpg serve": it parses tools/list with the SDK's ListToolsResultSchema and
// exits non-zero on any schema error.
func TestInspectorCLIListsTools(t *testing.T) {
	db := conformanceDB(t)
	dir := npmPackages(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cli := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "cli", "build", "cli.js")
	cmd := exec.CommandContext(ctx, "node", cli, "--cli",
		"-e", "MCPG_TEST_AS_MAIN=1", "-e", "MCPG_DATABASE_URL="+db.URL(),
		os.Args[0], "serve", "--method", "tools/list")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("inspector --cli: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	var res struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("inspector output: %v: %s", err, out)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema["type"] != "object" {
			t.Errorf("%s: inputSchema %v", tool.Name, tool.InputSchema)
		}
	}
	sort.Strings(names)
	if got := strings.Join(names, ","); got != "describe_table,explain_query,list_schemas,list_tables,run_select" {
		t.Errorf("inspector listed %s", got)
	}
}
