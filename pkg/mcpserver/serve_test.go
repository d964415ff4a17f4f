package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// lockedBuffer is a bytes.Buffer safe to write and read concurrently.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// unreachableURL names a database nothing listens for.
const unreachableURL = "postgres://127.0.0.1:1/none?connect_timeout=2"

func TestServeSetupErrors(t *testing.T) {
	noDir := filepath.Join(t.TempDir(), "missing", "audit.jsonl")
	for _, c := range []struct {
		name  string
		opts  ServeOptions
		setup bool
		msg   string
	}{
		{"config", ServeOptions{Config: Config{MaxRows: -1}, DatabaseURL: unreachableURL, PoolSize: 1}, true, "max rows -1 is out of range"},
		{"audit log", ServeOptions{AuditLog: noDir, DatabaseURL: unreachableURL, PoolSize: 1}, true, "cannot open audit log"},
		{"database URL", ServeOptions{DatabaseURL: "postgres://x/y?sslmode=bogus", PoolSize: 1}, true, "--database-url: "},
		{"strict role, unreachable", ServeOptions{StrictRole: true, DatabaseURL: unreachableURL, PoolSize: 1}, false, "--strict-role: cannot check the role, database unreachable"},
	} {
		var stderr lockedBuffer
		c.opts.Stdin, c.opts.Stdout, c.opts.Stderr = strings.NewReader(""), &bytes.Buffer{}, &stderr
		err := Serve(context.Background(), c.opts)
		var se *SetupError
		if err == nil || errors.As(err, &se) != c.setup || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v (SetupError %v), want %q", c.name, err, c.setup, c.msg)
		}
	}
}

// TestServeStdioDatabaseDown: with the database down Serve still starts,
// warns, and returns nil when stdin closes.
func TestServeStdioDatabaseDown(t *testing.T) {
	var stderr lockedBuffer
	err := Serve(context.Background(), ServeOptions{DatabaseURL: unreachableURL, PoolSize: 1,
		Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &stderr})
	if err != nil || !strings.Contains(stderr.String(), "database unreachable at start-up") || !strings.Contains(stderr.String(), "serving MCP on stdio") {
		t.Errorf("%v: %s", err, stderr.String())
	}
}

// TestServeHTTPUntilCancelled serves HTTP with an audit log on stderr,
// answers a call, and on cancel shuts down cleanly, flushing the log.
func TestServeHTTPUntilCancelled(t *testing.T) {
	db := pgtest.Shared(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeOptions{DatabaseURL: db.URL(), PoolSize: 2, HTTPAddr: "127.0.0.1:0",
			HTTP: HTTPOptions{Token: "tok"}, AuditLog: "-", Stderr: &stderr})
	}()
	re := regexp.MustCompile(`serving MCP over HTTP" addr=(\S+)`)
	var addr string
	for deadline := time.Now().Add(30 * time.Second); addr == ""; {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		}
		select {
		case err := <-done:
			t.Fatalf("Serve returned %v: %s", err, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("not serving: %s", stderr.String())
		}
	}
	c, err := client.NewStreamableHttpClient("http://"+addr+EndpointPath,
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer tok"}))
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := call(t, start(t, c), "run_select", map[string]any{"sql": "SELECT 41 + 1 AS n"}); isErr || !strings.Contains(text, "42") {
		t.Errorf("run_select: %q", text)
	}
	c.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("after cancel: %v", err)
	}
	logs := stderr.String()
	for _, want := range []string{"DANGEROUS DATABASE ROLE", "shutting down", `"type":"audit"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, logs)
		}
	}
}
