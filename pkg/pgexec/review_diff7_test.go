package pgexec

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

// A call's watchdog timer that expired just as its statement ended has
// started fire in its own goroutine; disarm (Stop returns false) sets pc
// to nil, but nothing tells that goroutine its watch is over. The
// callState goes back to the sync.Pool, the next call takes it and arms
// it with its own connection; the late fire then finds pc set and cancels
// the NEXT call's statement (CancelRequest plus a 1 s socket deadline) —
// the "late cancel hits the next statement" hazard the executor's
// comments say it rules out.
//
// Holding the watchdog's mutex while the timer expires stands for the
// scheduling delay of the AfterFunc goroutine (a loaded machine); the
// rest is the executor's own code path: call A disarms, puts its state
// back, call B (Run) gets it.
func TestDiff7ReviewWatchdogLateFireCancelsNextCall(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx := testCtx(t)
	pool := newPool(t, 1, true)
	e := newExec(t, pool, Options{StatementTimeout: time.Hour})

	// Call A's watch, on the pool's connection; warm the connection so
	// the next Acquire needs no ping.
	c, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	st := new(callState)
	st.wd.arm(c.Conn().PgConn(), 20*time.Millisecond)
	st.wd.mu.Lock()
	time.Sleep(200 * time.Millisecond) // A's timer expires: fire waits for the mutex
	c.Release()
	st.wd.mu.Unlock()
	if st.wd.disarm() { // A's statement ended first: A is not "watched"
		t.Fatal("setup: fire ran before disarm")
	}
	e.states.Put(st) // as putState does at the end of call A

	// Call B: a 1.5 s statement under a 1 h statement_timeout.
	start := time.Now()
	res, err := e.Run(context.Background(), "select pg_sleep(1.5)", nil, nil)
	var qe *QueryError
	if err != nil {
		timedOut := errors.As(err, &qe) && qe.TimedOut
		t.Fatalf("call B (pg_sleep(1.5), statement_timeout 1h) failed after %v: %v (TimedOut=%v): call A's late watchdog canceled it",
			time.Since(start).Round(time.Millisecond), err, timedOut)
	}
	if res.Rows != 1 {
		t.Fatalf("rows %d", res.Rows)
	}
	if n := e.DestroyedConns(); n != 0 {
		t.Errorf("call B's clean connection destroyed (%d) as if its watchdog fired", n)
	}
}
