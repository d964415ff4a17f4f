package proxy_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

func TestPauseResume(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 2, timeout: 10 * time.Second})
	conn := connect(t, r.url("postgres"))
	ctx := context.Background()
	r.Pause()
	done := make(chan error, 1)
	go func() {
		_, err := conn.Exec(ctx, "select 1")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("query ran while paused: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	waiting := false
	for _, cs := range r.Clients() {
		waiting = waiting || cs.State == "waiting"
	}
	if !waiting {
		t.Errorf("no client shown waiting: %+v", r.Clients())
	}
	r.Resume()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Shutdown closes idle clients at once and lets a transaction finish.
func TestShutdownDrains(t *testing.T) {
	c := pgtest.Shared(t)
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m, size: 2})
			ctx := context.Background()
			idle := connect(t, r.url("postgres"))
			busy := connect(t, r.url("postgres"))
			tx, err := busy.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			tx.Exec(ctx, "select 1")
			down := make(chan error, 1)
			go func() {
				sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				down <- r.Shutdown(sctx)
			}()
			time.Sleep(150 * time.Millisecond)
			if _, err := idle.Exec(ctx, "select 1"); err == nil {
				t.Error("idle client still served during shutdown")
			}
			if _, err := tx.Exec(ctx, "select 2"); err != nil {
				t.Fatalf("transaction cut by shutdown: %v", err)
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatalf("commit: %v", err)
			}
			select {
			case err := <-down:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("shutdown did not finish after the transaction")
			}
		})
	}
}

func TestMaxClients(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 2, maxClients: 2})
	connect(t, r.url("postgres"))
	connect(t, r.url("postgres"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgxConnect(ctx, r.url("postgres"))
	if err == nil {
		conn.Close(ctx)
		t.Fatal("third client accepted with max 2")
	}
	if want := "53300"; !contains(err.Error(), want) {
		t.Fatalf("third client: %v", err)
	}
}

// A statement still running when the drain's time is up does not hold
// Shutdown past it: the client and the server working for it are cut.
func TestShutdownDeadlineCutsRunningStatement(t *testing.T) {
	c := pgtest.Shared(t)
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m, size: 2})
			busy := connect(t, r.url("postgres"))
			go busy.Exec(context.Background(), "select pg_sleep(20)")
			time.Sleep(200 * time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			start := time.Now()
			down := make(chan error, 1)
			go func() { down <- r.Shutdown(ctx) }()
			select {
			case err := <-down:
				if err == nil {
					t.Error("Shutdown reported a clean drain with a statement still running")
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("Shutdown still waiting %v after its 500ms deadline, on the running statement", time.Since(start))
			}
		})
	}
}

// A statement still running at the drain deadline is cancelled on its
// server before the client is cut: else the backend runs it to its end
// and, in autocommit, commits it after qprouter has gone.
func TestShutdownDeadlineCancelsRunningStatement(t *testing.T) {
	c := pgtest.Shared(t)
	for i, m := range traceModes {
		t.Run(m.name, func(t *testing.T) {
			table := fmt.Sprintf("drain_cancel_%d", i)
			execDirect(t, "drop table if exists "+table+"; create table "+table+" (a int)")
			r := startProxy(t, c, cfg{mode: m.mode, size: 2, loop: m.loop})
			busy := connect(t, r.url("postgres"))
			go busy.Exec(context.Background(), "insert into "+table+" select 1 from pg_sleep(2)")
			time.Sleep(300 * time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if err := r.Shutdown(ctx); err == nil {
				t.Fatal("Shutdown reported a clean drain with a statement still running")
			}
			time.Sleep(2500 * time.Millisecond) // past the sleep's end
			var n int
			if err := connect(t, c.URL()).QueryRow(context.Background(), "select count(*) from "+table).Scan(&n); err != nil {
				t.Fatal(err)
			} else if n != 0 {
				t.Errorf("the statement running at the drain deadline went on and committed (%d rows)", n)
			}
		})
	}
}

// A client that stops reading in the middle of an answer relayed on the
// loop: at the drain deadline Shutdown cuts it (closes its socket and the
// server's), and must return, where the session used to wait forever for
// the closed socket to drain.
func TestShutdownCutsSlowClientOnLoop(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 2, loop: true})
	nc, err := net.Dial("tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.(*net.TCPConn).SetReadBuffer(4096)
	fe := pgproto3.NewFrontend(nc, nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": "postgres", "database": "postgres"}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for {
		m, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	// A second query, so the session is parked on the loop first.
	fe.Send(&pgproto3.Query{String: "select 1"})
	fe.Flush()
	for {
		m, _ := fe.Receive()
		if _, ok := m.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	// ~ 600 kB: below streamAfter (1 MiB), more than the socket buffers
	// with a reader that reads nothing.
	fe.Send(&pgproto3.Query{String: "select repeat('x', 1000) from generate_series(1, 50000)"})
	fe.Flush()
	time.Sleep(500 * time.Millisecond) // the relay stops: the client's socket is full
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	down := make(chan error, 1)
	go func() { down <- r.Shutdown(ctx) }()
	select {
	case <-down:
	case <-time.After(5 * time.Second):
		t.Fatalf("Shutdown still waiting 5s after its 300ms deadline: the aborted session on the loop never ends")
	}
}
