package pgexec

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// The watchdog (context.WithTimeoutCause per call, and with it the
// exchange's context.AfterFunc, which a call with context.Background()
// used to skip) tripled the fast path's allocations.
func TestDiff6ReviewAllocs(t *testing.T) {
	pool := newPool(t, 1, true)
	e := newExec(t, pool, Options{})
	ctx := context.Background()
	last, err := e.Run(ctx, "SELECT 1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(200, func() {
		res, err := e.Run(ctx, "SELECT 1", nil, last.Doc[:0])
		if err != nil {
			t.Fatal(err)
		}
		last = res
	})
	// 1f02b37 (before the watchdog): 5; docs/pgexec.md's table: 4.
	if n > 5 {
		t.Errorf("a SELECT 1 call allocates %v times, up from 5 before the watchdog (docs/pgexec.md: 4 allocs/op)", n)
	}
}

func rv6Diff6OpenPool(t *testing.T) *pgxpool.Pool {
	cfg, err := pgxpool.ParseConfig(pgtest.Shared(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return pool
}

func TestDiff6ReviewClosedPoolLeaks(t *testing.T) {
	mk := func(withExec bool) weak.Pointer[pgxpool.Pool] {
		pool := rv6Diff6OpenPool(t)
		if withExec {
			e := newExec(t, pool, Options{})
			if _, err := e.Run(testCtx(t), "SELECT 1", nil, nil); err != nil {
				t.Fatal(err)
			}
		}
		pool.Close()
		return weak.Make(pool)
	}
	control, used := mk(false), mk(true)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && (control.Value() != nil || used.Value() != nil) {
		runtime.GC()
		time.Sleep(50 * time.Millisecond)
	}
	if control.Value() != nil {
		t.Fatal("control pool not collected; test inconclusive")
	}
	if used.Value() != nil {
		t.Errorf("a closed pool that served an executor is never freed (lingerSets keeps it)")
	}
}

// A statement the server itself stops at its statement_timeout, but more
// than the watchdog's second late: a built-in that runs 1-2 s without an
// interrupt check (strpos, sized here to take about 1.6 s). The server's
// own 57014 "canceling statement due to statement timeout" comes within
// the cancel's grace and nothing lingers, yet the call reports the
// watchdog's text ("its connection stays taken until it does") and the
// error no longer unwraps to the server's *pgconn.PgError. Before the
// watchdog the same call said "statement timed out after 100ms" and
// carried the server's error.
func TestDiff6ReviewServerStoppedTimeoutReportedAsLinger(t *testing.T) {
	a := admin(t)
	strpos := func(m int) string {
		return fmt.Sprintf("SELECT strpos(repeat('a', 3000000), 'b' || repeat('a', %d))", m)
	}
	t0 := time.Now()
	mustExec(t, a, strpos(300))
	m := int(300 * float64(1600*time.Millisecond) / float64(time.Since(t0)))
	pool := newPool(t, 1, true)
	e := newExec(t, pool, Options{StatementTimeout: 100 * time.Millisecond})
	var err error
	ok := false
	for try := 0; try < 4 && !ok; try++ {
		start := time.Now()
		_, err = e.Run(testCtx(t), strpos(m), nil, nil)
		took := time.Since(start)
		t.Logf("m=%d %v: %v", m, took.Round(time.Millisecond), err)
		// The watchdog fires at 1.1 s; its cancel's grace ends 1 s later.
		ok = took >= 1300*time.Millisecond && took <= 1900*time.Millisecond
		m = int(float64(m) * float64(1600*time.Millisecond) / float64(took))
	}
	if !ok {
		t.Skip("the statement never took 1.3-1.9 s on this machine")
	}
	var qe *QueryError
	if !errors.As(err, &qe) || !qe.TimedOut {
		t.Fatalf("want a timeout, got %v", err)
	}
	if want := "statement timed out after 100ms"; qe.Message != want {
		t.Errorf("message %q, want %q as before (the server stopped the statement itself; no connection stays taken)", qe.Message, want)
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Errorf("the error does not unwrap to the server's *pgconn.PgError (docs/pgexec.md: Unwrap gives the *pgconn.PgError)")
	}
}
