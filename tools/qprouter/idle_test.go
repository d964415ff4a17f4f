package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// idleClients starts qprouter with args and connects n pgx clients to it;
// both go at the end of the test.
func idleClients(t *testing.T, serverURL string, n int, args ...string) []*pgx.Conn {
	t.Helper()
	url, stop := startRouter(t, serverURL, args...)
	t.Cleanup(stop)
	conns := make([]*pgx.Conn, n)
	for i := range conns {
		cn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cn.Close(context.Background()) })
		conns[i] = cn
	}
	return conns
}

// TestClientIdleTimeout runs qprouter with --client-idle-timeout 400ms in
// both modes: a client silent for over a second with no transaction open
// is closed; one that keeps sending, and one silent inside a transaction,
// are not.
func TestClientIdleTimeout(t *testing.T) {
	c := pgtest.Shared(t)
	for _, mode := range []string{"session", "transaction"} {
		t.Run(mode, func(t *testing.T) {
			bg := context.Background()
			conns := idleClients(t, c.URL(), 3, "--pool-mode", mode, "--client-idle-timeout", "400ms")
			silent, busy, inTx := conns[0], conns[1], conns[2]
			if _, err := silent.Exec(bg, "SELECT 1"); err != nil {
				t.Fatal(err)
			}
			if _, err := inTx.Exec(bg, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 12 {
					if _, err := busy.Exec(bg, "SELECT 1"); err != nil {
						t.Errorf("a client sending every 100 ms, query %d: %v", i, err)
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
			}()
			time.Sleep(1200 * time.Millisecond)
			wg.Wait()
			if _, err := silent.Exec(bg, "SELECT 1"); err == nil {
				t.Error("a client silent for 1.2 s with no transaction open: still served")
			}
			if _, err := inTx.Exec(bg, "SELECT 1"); err != nil {
				t.Errorf("a client silent inside a transaction: %v", err)
			}
			if _, err := inTx.Exec(bg, "COMMIT"); err != nil {
				t.Errorf("COMMIT: %v", err)
			}
		})
	}
}

// TestIdleTransactionTimeout runs qprouter with --idle-transaction-timeout
// 400ms in both modes: a client silent inside a transaction for over a
// second is closed and its transaction rolled back; one silent outside a
// transaction, and one waiting inside a transaction for a long query, are
// not.
func TestIdleTransactionTimeout(t *testing.T) {
	c := pgtest.Shared(t)
	serverExec(t, c.URL(), "DROP TABLE IF EXISTS idle_tx", "CREATE TABLE idle_tx (n int)")
	for _, mode := range []string{"session", "transaction"} {
		t.Run(mode, func(t *testing.T) {
			bg := context.Background()
			conns := idleClients(t, c.URL(), 3, "--pool-mode", mode, "--idle-transaction-timeout", "400ms")
			inTx, outside, working := conns[0], conns[1], conns[2]
			if _, err := inTx.Exec(bg, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			if _, err := inTx.Exec(bg, "INSERT INTO idle_tx VALUES (1)"); err != nil {
				t.Fatal(err)
			}
			if _, err := outside.Exec(bg, "SELECT 1"); err != nil {
				t.Fatal(err)
			}
			if _, err := working.Exec(bg, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			if _, err := working.Exec(bg, "SELECT pg_sleep(1.2)"); err != nil {
				t.Errorf("a transaction waiting for its query: %v", err)
			}
			if _, err := working.Exec(bg, "COMMIT"); err != nil {
				t.Errorf("COMMIT after the long query: %v", err)
			}
			if _, err := inTx.Exec(bg, "COMMIT"); err == nil {
				t.Error("a client silent for 1.2 s inside a transaction: its COMMIT went through")
			}
			if _, err := outside.Exec(bg, "SELECT 1"); err != nil {
				t.Errorf("a client silent outside a transaction: %v", err)
			}
			var n int
			if err := outside.QueryRow(bg, "SELECT count(*) FROM idle_tx").Scan(&n); err != nil || n != 0 {
				t.Errorf("rows of the closed client's transaction: %d %v, want 0 (rolled back)", n, err)
			}
		})
	}
}
