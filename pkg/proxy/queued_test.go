package proxy_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/pool"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// PAUSE stops handing out servers also to a client whose statement
// already waited in the pool's queue when the pause came: the server
// released during the pause goes idle, and the statement runs at RESUME.
func TestPauseHoldsQueuedClients(t *testing.T) {
	for _, loop := range []bool{false, true} {
		t.Run(map[bool]string{false: "goroutine", true: "loop"}[loop], func(t *testing.T) {
			c := pgtest.Shared(t)
			r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1, timeout: 10 * time.Second, loop: loop})
			ctx := context.Background()
			busy := connect(t, r.url("postgres"))
			a := connect(t, r.url("postgres"))
			tx, err := busy.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "select 1"); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := a.Exec(ctx, "select 1", pgx.QueryExecModeSimpleProtocol)
				done <- err
			}()
			deadline := time.Now().Add(3 * time.Second)
			for waiting(r) == 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if waiting(r) == 0 {
				t.Fatal("the client does not wait for the server")
			}
			r.Pause()
			defer r.Resume()
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				t.Fatalf("a statement queued before PAUSE ran while paused (err %v)", err)
			case <-time.After(300 * time.Millisecond):
			}
			r.Resume()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

func waiting(r *running) int {
	n := 0
	for _, p := range r.pools.All() {
		n += p.Stat().Waiting
	}
	return n
}

// A client waiting on the event loop (WaitAsync) that is granted a slot to
// connect in (a reserve connection after ReserveTimeout, or room a
// discarded server made) connects in it from its goroutine, rather than
// giving it back and queueing again last: with a reserve pool it would
// wait ReserveTimeout twice, and its AcquireTimeout would start over.
func TestLoopWaiterKeepsGrantedSlot(t *testing.T) {
	const reserveAfter = 500 * time.Millisecond
	for _, loop := range []bool{false, true} {
		t.Run(map[bool]string{false: "goroutine", true: "loop"}[loop], func(t *testing.T) {
			c := pgtest.Shared(t)
			r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1, timeout: 10 * time.Second, loop: loop})
			ctx := context.Background()
			busy := connect(t, r.url("postgres"))
			a := connect(t, r.url("postgres"))
			r.pools.Get("postgres", "postgres").SetConfig(pool.Config{Size: 1, AcquireTimeout: 10 * time.Second, ReservePool: 1, ReserveTimeout: reserveAfter})
			tx, err := busy.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, "select 1"); err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			if _, err := a.Exec(ctx, "select 1", pgx.QueryExecModeSimpleProtocol); err != nil {
				t.Fatal(err)
			}
			d := time.Since(t0)
			t.Logf("waited %s for a reserve connection (reserve_pool_timeout %s); hand-backs %v", d, reserveAfter, r.LoopHandBacks())
			if d > reserveAfter*3/2 {
				t.Errorf("waited %s for a reserve connection, reserve_pool_timeout %s", d, reserveAfter)
			}
		})
	}
}
