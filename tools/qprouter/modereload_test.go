package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// A reload changes pool modes, top-level and per pool, for the clients
// that connect after it; connected clients keep the mode they started in
// and nobody is dropped. One server connection per pool makes each mode
// visible: transaction-mode clients take turns on it, a session-mode
// client keeps it until it leaves.
func TestPoolModeReload(t *testing.T) {
	c := pgtest.Shared(t)
	ctx := context.Background()
	base := fmt.Sprintf("server_url = %q\npool_size = 1\nacquire_timeout = \"20s\"\n", c.URL())
	cfgPath := filepath.Join(t.TempDir(), "qprouter.toml")
	connect := func(t *testing.T, url string) *pgx.Conn {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		cn, err := pgx.Connect(cctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cn.Close(ctx) })
		return cn
	}
	show := func(t *testing.T, cn *pgx.Conn, name string) string {
		t.Helper()
		var v string
		if err := cn.QueryRow(ctx, "SHOW "+name).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	// takeTurns checks that clients share the pool's one server, as only
	// transaction-mode clients can.
	takeTurns := func(t *testing.T, what string, cns ...*pgx.Conn) {
		t.Helper()
		for range 2 {
			for _, cn := range cns {
				ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				var one int
				err := cn.QueryRow(ctx, "SELECT $1::int", 1).Scan(&one) // a prepared statement
				cancel()
				if err != nil {
					t.Fatalf("%s: a client could not take its turn on the one server: %v", what, err)
				}
			}
		}
	}
	// heldBy checks that do cannot finish while holder is connected (it
	// holds the pool's one server for its session) and finishes once
	// holder leaves.
	heldBy := func(t *testing.T, what string, holder *pgx.Conn, do func() error) {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- do() }()
		select {
		case err := <-done:
			t.Fatalf("%s: finished (%v) while a session-mode client held the server", what, err)
		case <-time.After(400 * time.Millisecond):
		}
		holder.Close(ctx)
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s, once the session-mode client left: %v", what, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still waiting after the session-mode client left", what)
		}
	}

	t.Run("transaction to session, top level", func(t *testing.T) {
		write(t, cfgPath, base+"pool_mode = \"transaction\"\n")
		addr, reload, stop := startWithHUP(t, "--config", cfgPath)
		defer stop()
		url := "postgres://postgres@" + addr + "/postgres?sslmode=disable"
		a, b := connect(t, url), connect(t, url)
		takeTurns(t, "before the reload", a, b)
		write(t, cfgPath, base+"pool_mode = \"session\"\n")
		if logs := reload("msg=reloaded"); !strings.Contains(logs, "reload: pool modes changed") {
			t.Errorf("the reload did not log the mode change:\n%s", logs)
		}
		takeTurns(t, "clients connected before the reload, after it", a, b)
		// The server passes from a transaction-mode client with a setting
		// of its own to a session-mode client and back.
		if _, err := a.Exec(ctx, "SET work_mem = '7MB'"); err != nil {
			t.Fatal(err)
		}
		held := connect(t, url) // session mode: the server is its own from now on
		if got := show(t, held, "work_mem"); got != "4MB" {
			t.Errorf("a session-mode client got the server with work_mem %s, want the default 4MB", got)
		}
		heldBy(t, "a transaction-mode client's query", held, func() error { _, err := a.Exec(ctx, "SELECT 1"); return err })
		takeTurns(t, "clients connected before the reload, once the session-mode client left", a, b)
		if got := show(t, a, "work_mem"); got != "7MB" {
			t.Errorf("the transaction-mode client's work_mem after the session-mode client: %s, want 7MB", got)
		}
	})

	t.Run("session to transaction, one pool's table", func(t *testing.T) {
		write(t, cfgPath, base+"pool_mode = \"session\"\n")
		addr, reload, stop := startWithHUP(t, "--config", cfgPath)
		defer stop()
		url := "postgres://postgres@" + addr + "/postgres?sslmode=disable"
		held := connect(t, url)
		show(t, held, "work_mem")
		write(t, cfgPath, base+"pool_mode = \"session\"\n[pools.postgres]\npool_mode = \"transaction\"\n")
		logs := reload("msg=reloaded")
		if !strings.Contains(logs, "transaction-mode clients are served by goroutines until a restart") {
			t.Errorf("the reload did not say the event loop is not started:\n%s", logs)
		}
		// The session-mode client connected before keeps its server: a new
		// client's login waits for it.
		var a *pgx.Conn
		heldBy(t, "a new client's login", held, func() error {
			var err error
			a, err = pgx.Connect(ctx, url)
			return err
		})
		t.Cleanup(func() { a.Close(ctx) })
		b := connect(t, url)
		takeTurns(t, "clients connected after the reload", a, b)
	})
}
