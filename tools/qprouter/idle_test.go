package main

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// wantClosedWith reads the message qprouter sent cn unasked: a FATAL error
// with code and text in its message, after which the connection is closed.
func wantClosedWith(t *testing.T, cn *pgx.Conn, code, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	msg, err := cn.PgConn().ReceiveMessage(ctx)
	var pe *pgconn.PgError
	if er, ok := msg.(*pgproto3.ErrorResponse); ok {
		pe = pgconn.ErrorResponseToPgError(er)
	} else if !errors.As(err, &pe) {
		t.Errorf("want FATAL %s %q, got %T %v", code, text, msg, err)
		return
	}
	if pe.Severity != "FATAL" || pe.Code != code || !strings.Contains(pe.Message, text) {
		t.Errorf("got %s %s %q, want FATAL %s and %q", pe.Severity, pe.Code, pe.Message, code, text)
	}
	if _, err := cn.Exec(context.Background(), "SELECT 1"); err == nil {
		t.Error("the connection still serves queries after the FATAL error")
	}
}

// keepSending runs stmts on cn n times over on a goroutine of wg, pausing
// after each round; a failure is a test error naming what and the round.
func keepSending(t *testing.T, wg *sync.WaitGroup, cn *pgx.Conn, what string, n int, pause time.Duration, stmts ...string) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range n {
			for _, sql := range stmts {
				if _, err := cn.Exec(context.Background(), sql); err != nil {
					t.Errorf("%s, round %d, %s: %v", what, i, sql, err)
					return
				}
			}
			time.Sleep(pause)
		}
	}()
}

// reconnect connects a new client like cfg's and runs a query, retrying
// for up to 3 s while qprouter refuses it as one client too many (a client
// it closed may still be leaving).
func reconnect(t *testing.T, cfg *pgx.ConnConfig) {
	t.Helper()
	bg := context.Background()
	var err error
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var cn *pgx.Conn
		if cn, err = pgx.ConnectConfig(bg, cfg); err == nil {
			_, err = cn.Exec(bg, "SELECT 1")
			cn.Close(bg)
			if err == nil {
				return
			}
		}
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "53300" {
			break
		}
	}
	t.Errorf("a new client after one was closed: %v", err)
}

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
			conns := idleClients(t, c.URL(), 3, "--pool-mode", mode, "--client-idle-timeout", "400ms", "--max-clients", "3")
			silent, busy, inTx := conns[0], conns[1], conns[2]
			if _, err := silent.Exec(bg, "SELECT 1"); err != nil {
				t.Fatal(err)
			}
			if _, err := inTx.Exec(bg, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			keepSending(t, &wg, busy, "a client sending every 100 ms", 12, 100*time.Millisecond, "SELECT 1")
			time.Sleep(1200 * time.Millisecond)
			wg.Wait()
			wantClosedWith(t, silent, "57P05", "client_idle_timeout (400ms without a message)")
			reconnect(t, silent.Config()) // --max-clients 3: the closed client's place is free
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
			wantClosedWith(t, inTx, "25P03", "idle_transaction_timeout (400ms idle in a transaction)")
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

// wantStopped waits up to 2 s for no backend of the server at url to be
// running sql.
func wantStopped(t *testing.T, url, sql string) {
	t.Helper()
	bg := context.Background()
	direct, err := pgx.Connect(bg, url)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close(bg)
	n := -1
	for range 40 {
		if err := direct.QueryRow(bg, "SELECT count(*) FROM pg_stat_activity WHERE query = $1 AND state = 'active'", sql).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("%q still runs on the server 2 s after its client was closed (%d backends)", sql, n)
}

// TestQueryTimeout runs qprouter with --query-timeout 500ms in both modes:
// a query that runs longer ends its client with FATAL 57014 and is
// cancelled on the server (the backend stops sleeping at once, although
// its socket is gone); short queries, and a client idle inside a
// transaction, are not touched, and the pool serves new clients after.
func TestQueryTimeout(t *testing.T) {
	c := pgtest.Shared(t)
	for _, mode := range []string{"session", "transaction"} {
		t.Run(mode, func(t *testing.T) {
			bg := context.Background()
			conns := idleClients(t, c.URL(), 3, "--pool-mode", mode, "--pool-size", "3", "--query-timeout", "500ms", "--max-clients", "3")
			slow, quick, inTx := conns[0], conns[1], conns[2]
			if _, err := inTx.Exec(bg, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			keepSending(t, &wg, quick, "a 0.2 s query", 6, 0, "SELECT pg_sleep(0.2)")
			sleep := "SELECT pg_sleep(30) /* " + mode + " */"
			_, err := slow.Exec(bg, sleep)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Severity != "FATAL" || pe.Code != "57014" || !strings.Contains(pe.Message, "query_timeout (no answer within 500ms)") {
				t.Errorf("a 30 s query: %v, want FATAL 57014 query_timeout", err)
			}
			wg.Wait()
			wantStopped(t, c.URL(), sleep)
			if _, err := inTx.Exec(bg, "COMMIT"); err != nil {
				t.Errorf("a client idle in a transaction for over a second: %v", err)
			}
			reconnect(t, slow.Config()) // --max-clients 3: the closed client's place is free
		})
	}
}

// TestTransactionTimeout runs qprouter with --transaction-timeout 600ms in
// both modes: a transaction kept busy past it, and a statement on its own
// that runs past it, end their clients with FATAL 25P04 (the first rolled
// back, the second cancelled on the server); back-to-back transactions of
// 0.1 s each, for 1.5 s, and a client idle outside a transaction are not
// touched.
func TestTransactionTimeout(t *testing.T) {
	c := pgtest.Shared(t)
	serverExec(t, c.URL(), "DROP TABLE IF EXISTS tx_timeout", "CREATE TABLE tx_timeout (n int)")
	for _, mode := range []string{"session", "transaction"} {
		t.Run(mode, func(t *testing.T) {
			bg := context.Background()
			conns := idleClients(t, c.URL(), 4, "--pool-mode", mode, "--pool-size", "4", "--transaction-timeout", "600ms")
			longTx, longStmt, short, idle := conns[0], conns[1], conns[2], conns[3]
			if _, err := idle.Exec(bg, "SELECT 1"); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			keepSending(t, &wg, short, "a transaction of 0.1 s", 15, 0, "BEGIN", "SELECT pg_sleep(0.1)", "COMMIT")
			sleep := "SELECT pg_sleep(30) /* tx " + mode + " */"
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := longStmt.Exec(bg, sleep)
				var pe *pgconn.PgError
				if !errors.As(err, &pe) || pe.Code != "25P04" || !strings.Contains(pe.Message, "transaction_timeout (a transaction open for 600ms)") {
					t.Errorf("a 30 s statement: %v, want FATAL 25P04 transaction_timeout", err)
				}
			}()
			if _, err := longTx.Exec(bg, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			if _, err := longTx.Exec(bg, "INSERT INTO tx_timeout VALUES (1)"); err != nil {
				t.Fatal(err)
			}
			var err error
			for range 30 {
				if _, err = longTx.Exec(bg, "SELECT 1"); err != nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Severity != "FATAL" || pe.Code != "25P04" {
				t.Errorf("a transaction kept busy for 3 s: %v, want FATAL 25P04", err)
			}
			wg.Wait()
			var n int
			if err := idle.QueryRow(bg, "SELECT count(*) FROM tx_timeout").Scan(&n); err != nil || n != 0 {
				t.Errorf("rows of the closed transaction: %d %v, want 0 (rolled back)", n, err)
			}
			wantStopped(t, c.URL(), sleep)
		})
	}
}

// TestClientLoginTimeout runs qprouter with --client-login-timeout 300ms in
// both modes (transaction mode logs clients in on the event loop): a
// client that sends part of its startup packet and then nothing is closed
// well before the 10 s default, and one that logs in is served.
func TestClientLoginTimeout(t *testing.T) {
	c := pgtest.Shared(t)
	for _, mode := range []string{"session", "transaction"} {
		t.Run(mode, func(t *testing.T) {
			url, stop := startRouter(t, c.URL(), "--pool-mode", mode, "--client-login-timeout", "300ms")
			defer stop()
			cfg, err := pgx.ParseConfig(url)
			if err != nil {
				t.Fatal(err)
			}
			nc, err := net.Dial("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			if _, err := nc.Write([]byte{0, 0, 0}); err != nil { // a length cut short
				t.Fatal(err)
			}
			nc.SetReadDeadline(time.Now().Add(3 * time.Second))
			if n, err := nc.Read(make([]byte, 64)); err != io.EOF {
				t.Errorf("a client silent after 3 bytes of its startup: read %d bytes, %v; want the connection closed (EOF) within 3 s", n, err)
			}
			cn, err := pgx.Connect(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			defer cn.Close(context.Background())
			if _, err := cn.Exec(context.Background(), "SELECT 1"); err != nil {
				t.Error(err)
			}
		})
	}
}
