package proxyserver

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
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
	cn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close(ctx)
	for _, q := range stmts {
		if _, err := cn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func countForTest(t *testing.T, url, q string) int {
	t.Helper()
	ctx := context.Background()
	cn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close(ctx)
	var n int
	if err := cn.QueryRow(ctx, q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
