package proxy_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// A cancel request for a client whose statement waits for a server (the
// one server is another client's) ends the wait at once with 57014, the
// statement never runs, and the client's connection goes on: with a
// simple Query and with the extended protocol, whose messages up to the
// Sync are dropped as PostgreSQL drops them after an error.
func TestCancelWhileWaitingForServer(t *testing.T) {
	c := pgtest.Shared(t)
	ctx := context.Background()
	direct := connect(t, c.URL())
	if _, err := direct.Exec(ctx, "drop table if exists cancel_wait; create table cancel_wait (n int)"); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		name string
		loop bool
	}{{"transaction", false}, {"transaction-loop", true}} {
		t.Run(m.name, func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1, timeout: 30 * time.Second, loop: m.loop})
			holder := connect(t, r.url("postgres"))
			waiter := connect(t, r.url("postgres"))
			for _, q := range []struct {
				name string
				mode pgx.QueryExecMode
			}{{"simple", pgx.QueryExecModeSimpleProtocol}, {"extended", pgx.QueryExecModeExec}} {
				// The holder keeps the pool's only server in a transaction.
				if _, err := holder.Exec(ctx, "begin; select 1", pgx.QueryExecModeSimpleProtocol); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() {
					_, err := waiter.Exec(ctx, "insert into cancel_wait values ($1)", q.mode, 1)
					done <- err
				}()
				time.Sleep(100 * time.Millisecond) // it waits for the server
				cancelExpecting57014(t, q.name, waiter.PgConn(), done, 10*time.Second)
				if st := waiter.PgConn().TxStatus(); st != 'I' {
					t.Errorf("%s: after the cancel the client is in state %q", q.name, st)
				}
				if _, err := holder.Exec(ctx, "commit"); err != nil {
					t.Fatal(err)
				}
				// The client goes on, in both protocols.
				var n int
				if err := waiter.QueryRow(ctx, "select $1::int + 1", q.mode, 41).Scan(&n); err != nil || n != 42 {
					t.Fatalf("%s: after the cancel: %d, %v", q.name, n, err)
				}
				if err := waiter.QueryRow(ctx, "select 7", pgx.QueryExecModeSimpleProtocol).Scan(&n); err != nil || n != 7 {
					t.Fatalf("%s: a simple query after the cancel: %d, %v", q.name, n, err)
				}
			}
			// A wait for a paused pool is cancelled the same way.
			r.Pause()
			done := make(chan error, 1)
			go func() {
				_, err := waiter.Exec(ctx, "insert into cancel_wait values (2)")
				done <- err
			}()
			time.Sleep(100 * time.Millisecond)
			cancelExpecting57014(t, "paused", waiter.PgConn(), done, 10*time.Second)
			r.Resume()
			var n int
			if err := waiter.QueryRow(ctx, "select 9").Scan(&n); err != nil || n != 9 {
				t.Fatalf("after the paused cancel: %d, %v", n, err)
			}
			// The cancelled inserts never ran.
			var rows int
			if err := direct.QueryRow(ctx, "select count(*) from cancel_wait").Scan(&rows); err != nil {
				t.Fatal(err)
			}
			if rows != 0 {
				t.Errorf("%d cancelled inserts ran", rows)
			}
			if got := r.CancelledWaits(); got != 3 {
				t.Errorf("CancelledWaits = %d, want 3", got)
			}
		})
	}
}

// cancelExpecting57014 sends conn's CancelRequest and fails unless the
// statement whose end done reports ends with 57014 within limit (and
// the cancel within 5 s).
func cancelExpecting57014(t *testing.T, what string, conn *pgconn.PgConn, done <-chan error, limit time.Duration) {
	t.Helper()
	t0 := time.Now()
	if err := conn.CancelRequest(context.Background()); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(limit):
		t.Fatalf("%s: the cancelled statement still runs or waits %s after the cancel", what, limit)
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("%s: the cancelled statement ended with %v, want 57014", what, err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("%s: the cancel took %s", what, d)
	}
}

// A client that vanishes while its statement runs: the statement runs
// to its end and commits, as on a direct connection (PostgreSQL notices
// a closed client only when it next writes); the proxy does not cancel
// it, in any mode, and the pool goes on.
func TestLeftStatementRunsToItsEnd(t *testing.T) {
	c := pgtest.Shared(t)
	ctx := context.Background()
	direct := connect(t, c.URL())
	if _, err := direct.Exec(ctx, "drop table if exists left_done; create table left_done (mode text)"); err != nil {
		t.Fatal(err)
	}
	for _, m := range garbageModes {
		t.Run(m.name, func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m.mode, size: 1, loop: m.loop})
			// A raw client: pgx would send a CancelRequest itself as it closes.
			raw := dialRaw(t, r.addr)
			raw.fe.Send(&pgproto3.Query{String: "insert into left_done select '" + m.name + "' from pg_sleep(0.3)"})
			if err := raw.fe.Flush(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
			raw.conn.Close() // gone mid-statement, no Terminate, no cancel
			deadline := time.Now().Add(5 * time.Second)
			for {
				var n int
				if err := direct.QueryRow(ctx, "select count(*) from left_done where mode = $1", m.name).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the insert of a client that left mid-statement never committed")
				}
				time.Sleep(50 * time.Millisecond)
			}
			// The pool's one server (or its replacement) serves the next client.
			next := connect(t, r.url("postgres"))
			var k int
			if err := next.QueryRow(ctx, "select 3").Scan(&k); err != nil || k != 3 {
				t.Fatalf("the next client: %d, %v", k, err)
			}
		})
	}
}

// A client that sends a statement and leaves while it waits for a server
// (the pool busy, or paused): the statement runs once a server is free,
// exactly once, as PostgreSQL runs a query it finds in its socket before
// the end of the stream. Only a cancel request withdraws it.
func TestLeftWhileWaitingStillRuns(t *testing.T) {
	c := pgtest.Shared(t)
	ctx := context.Background()
	direct := connect(t, c.URL())
	if _, err := direct.Exec(ctx, "drop table if exists left_waiting; create table left_waiting (mode text)"); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		name  string
		loop  bool
		pause bool
	}{{"transaction", false, false}, {"transaction-loop", true, false}, {"transaction-paused", false, true}, {"transaction-loop-paused", true, true}} {
		t.Run(m.name, func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1, timeout: 30 * time.Second, loop: m.loop})
			holder := connect(t, r.url("postgres"))
			raw := dialRaw(t, r.addr)
			if m.pause {
				r.Pause()
			} else if _, err := holder.Exec(ctx, "begin; select 1", pgx.QueryExecModeSimpleProtocol); err != nil {
				t.Fatal(err)
			}
			raw.fe.Send(&pgproto3.Query{String: "insert into left_waiting values ('" + m.name + "')"})
			if err := raw.fe.Flush(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond) // it waits for the server
			raw.conn.Close()
			time.Sleep(100 * time.Millisecond)
			if m.pause {
				r.Resume()
			} else if _, err := holder.Exec(ctx, "commit"); err != nil {
				t.Fatal(err)
			}
			// The server is free: the statement queued runs now.
			var k int
			if err := holder.QueryRow(ctx, "select 5").Scan(&k); err != nil || k != 5 {
				t.Fatalf("after: %d, %v", k, err)
			}
			time.Sleep(300 * time.Millisecond)
			var n int
			if err := direct.QueryRow(ctx, "select count(*) from left_waiting where mode = $1", m.name).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("the statement of a client that left while waiting ran %d times, want once", n)
			}
		})
	}
}

// slowRows gives COPY FROM rows slowly, for a cancel to land mid-COPY.
type slowRows struct{ n int }

func (r *slowRows) Read(p []byte) (int, error) {
	r.n++
	if r.n > 2000 {
		return 0, io.EOF
	}
	time.Sleep(5 * time.Millisecond)
	return copy(p, strings.Repeat("1\n", 100)), nil
}

// A CancelRequest in the middle of COPY TO STDOUT and of COPY FROM STDIN
// ends each with 57014, as on a direct connection, and the client goes on.
func TestCancelDuringCopy(t *testing.T) {
	c := pgtest.Shared(t)
	ctx := context.Background()
	for _, m := range garbageModes {
		t.Run(m.name, func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m.mode, size: 2, loop: m.loop})
			conn, err := pgconn.Connect(ctx, r.url("postgres"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			table := "cancel_copy_" + strings.ReplaceAll(m.name, "-", "_")
			if _, err := conn.Exec(ctx, "drop table if exists "+table+"; create table "+table+" (n int)").ReadAll(); err != nil {
				t.Fatal(err)
			}
			copies := []struct {
				name string
				run  func() error
			}{
				{"COPY TO", func() error {
					_, err := conn.CopyTo(ctx, io.Discard, "copy (select n from generate_series(1, 1000000000) n) to stdout")
					return err
				}},
				{"COPY FROM", func() error {
					_, err := conn.CopyFrom(ctx, &slowRows{}, "copy "+table+" from stdin")
					return err
				}},
			}
			for _, cp := range copies {
				done := make(chan error, 1)
				go func() { done <- cp.run() }()
				time.Sleep(200 * time.Millisecond)
				cancelExpecting57014(t, cp.name, conn, done, 15*time.Second)
				res, err := conn.Exec(ctx, "select 1").ReadAll()
				if err != nil || len(res) != 1 || len(res[0].Rows) != 1 {
					t.Fatalf("%s: the next query: %v", cp.name, err)
				}
			}
			var rows []*pgconn.Result
			if rows, err = conn.Exec(ctx, "select count(*) from "+table).ReadAll(); err != nil {
				t.Fatal(err)
			}
			if got := string(rows[0].Rows[0][0]); got != "0" {
				t.Errorf("the cancelled COPY FROM left %s rows", got)
			}
		})
	}
}
