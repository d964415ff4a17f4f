package proxyserver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

// serveForTest starts a Server from opts on a free port and returns it with
// its address; it is drained when the test ends.
func serveForTest(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	return serveAfter(t, opts, nil)
}

// serveAfter is serveForTest with before, when not nil, called on the
// Server before it serves.
func serveAfter(t *testing.T, opts Options, before func(*Server)) (*Server, string) {
	t.Helper()
	ready := make(chan string, 1)
	opts.Ready = func(a string) { ready <- a }
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if before != nil {
		before(s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case a := <-ready:
		return s, a
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("not listening after 10s")
	}
	return nil, ""
}

func execForTest(t *testing.T, url string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	cn := pgxConnect(t, url)
	for _, q := range stmts {
		if _, err := cn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func countForTest(t *testing.T, url, q string) int {
	t.Helper()
	ctx := context.Background()
	cn := pgxConnect(t, url)
	var n int
	if err := cn.QueryRow(ctx, q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// clusterConfig is a proxy in front of cl (trust) in mode, pool 2, whose
// timeouts no test waits out.
func clusterConfig(cl *pgtest.Cluster, mode string) Config {
	c := valid()
	c.ServerURL = fmt.Sprintf("postgres://127.0.0.1:%d/postgres?sslmode=disable", cl.Port)
	c.PoolMode = mode
	c.AcquireTimeout = 30 * time.Second
	c.IdleTimeout = time.Minute
	c.MaxLifetime = time.Hour
	c.ShutdownTimeout = 5 * time.Second
	return c
}

// consoleServe starts a proxy in front of cl in mode with the admin
// console (user "admin", trust).
func consoleServe(t *testing.T, cl *pgtest.Cluster, mode string, edit func(*Config)) (*Server, string, *pgtest.Cluster) {
	t.Helper()
	c := clusterConfig(cl, mode)
	c.AdminUsers = []string{"admin"}
	c.ConsoleDatabase = "pgbouncer"
	if edit != nil {
		edit(&c)
	}
	s, addr := serveForTest(t, Options{Config: c})
	return s, addr, cl
}
