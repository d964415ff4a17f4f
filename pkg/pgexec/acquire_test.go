// The wait for a pool connection is bounded.

package pgexec

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestAcquireTimeout: with the only connection busy, a second call fails
// after AcquireTimeout with *PoolBusyError (not a connection failure, and
// without sending anything), and the pool serves calls again afterwards.
func TestAcquireTimeout(t *testing.T) {
	pool := newPool(t, 1, true)
	e := newExec(t, pool, Options{AcquireTimeout: 200 * time.Millisecond})
	run(t, e, "SELECT 1") // the connection exists and is idle

	done := make(chan error, 1)
	go func() {
		_, err := e.Run(testCtx(t), "SELECT pg_sleep(2)", nil, nil)
		done <- err
	}()
	for pool.Stat().AcquiredConns() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	res, err := e.Run(testCtx(t), "SELECT 2", nil, nil)
	var busy *PoolBusyError
	if !errors.As(err, &busy) {
		t.Fatalf("want *PoolBusyError, got %T %v", err, err)
	}
	if busy.Size != 1 || busy.Wait != 200*time.Millisecond ||
		err.Error() != "pgexec: no database connection free within 200ms (all 1 in use by other calls); try again later" {
		t.Fatalf("%+v: %v", busy, err)
	}
	if strings.Contains(err.Error(), "acquire connection") {
		t.Fatal("a busy pool must not read as an unreachable database")
	}
	if res.Timing.Pool < 200*time.Millisecond {
		t.Fatalf("gave up after %v, before the timeout", res.Timing.Pool)
	}
	if err := <-done; err != nil {
		t.Fatalf("the call holding the connection: %v", err)
	}
	run(t, e, "SELECT 3")
	assertPoolIdle(t, pool)

	if _, err := New(pool, allowAll{}, Options{AcquireTimeout: -time.Second}); err == nil ||
		!strings.Contains(err.Error(), "AcquireTimeout") {
		t.Fatalf("a negative AcquireTimeout: %v", err)
	}
}
