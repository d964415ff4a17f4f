// Second review of pkg/pool (2026-12-06): each test asserts the behaviour
// docs/qprouter.md promises and fails on the code as it was reviewed; the
// comment above each says what goes wrong.

package pool_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/pool"
)

type rvp2Result struct {
	c   *pool.Conn
	err error
}

// rvp2AcquireAsync starts an Acquire and waits until it is queued.
func rvp2AcquireAsync(t *testing.T, p *pool.Pool) <-chan rvp2Result {
	t.Helper()
	before := p.Stat().Waiting
	got := make(chan rvp2Result, 1)
	go func() {
		c, err := p.Acquire(context.Background())
		got <- rvp2Result{c, err}
	}()
	deadline := time.Now().Add(2 * time.Second)
	for p.Stat().Waiting <= before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if p.Stat().Waiting <= before {
		t.Fatalf("the acquire did not queue: %+v", p.Stat())
	}
	return got
}

// rvp2Served waits up to within for the queued acquire's outcome; false
// (and a test error) when it did not come in time, after which it waits
// for the acquire to end so that nothing is left behind.
func rvp2Served(t *testing.T, p *pool.Pool, got <-chan rvp2Result, within time.Duration, what string) bool {
	t.Helper()
	select {
	case r := <-got:
		if r.err != nil {
			t.Errorf("%s: the waiting client failed: %v", what, r.err)
			return false
		}
		p.Release(r.c)
		return true
	case <-time.After(within):
		t.Errorf("%s: the waiting client was not served within %s (%+v)", what, within, p.Stat())
		if r := <-got; r.err == nil {
			p.Release(r.c)
		} else {
			t.Logf("it then got: %v", r.err)
		}
		return false
	}
}

// A reserve connection that is closed (Discard: broken, or in an unknown
// state; closeLocked: past max_lifetime) frees room in the reserve, but
// refillLocked only offers room within Size, and the reserve timer is not
// re-armed for a waiter that has already passed reserve_pool_timeout
// (reserveCheck re-arms only for waiters still short of it). So a client
// at the head of the queue, that has waited past reserve_pool_timeout,
// keeps waiting until a regular connection comes back or it times out
// with 53300, though the reserve has room. docs/qprouter.md: "A reserve
// connection (reserve_pool_size) opens for the client at the head of a
// pool's queue once it has waited reserve_pool_timeout, within the caps."
// pool.go: Discard/closeLocked -> refillLocked (reserveLocked(p.cfg.Size)),
// reserveCheck.
func TestPool2ReviewReserveRoomFreedServesWaiter(t *testing.T) {
	p, _ := newPool(t, pool.Config{Size: 1, ReservePool: 1, ReserveTimeout: 100 * time.Millisecond, AcquireTimeout: 4 * time.Second})
	ctx := context.Background()
	a, err := p.Acquire(ctx) // the regular connection, held by a long transaction
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release(a)
	r, err := p.Acquire(ctx) // after 100 ms: the reserve connection
	if err != nil {
		t.Fatal(err)
	}
	got := rvp2AcquireAsync(t, p)
	time.Sleep(400 * time.Millisecond) // past reserve_pool_timeout; the reserve is full
	select {
	case x := <-got:
		t.Fatalf("served beyond size 1 + reserve 1: %+v", x)
	default:
	}
	p.Discard(r) // the reserve connection breaks: the reserve has room again
	rvp2Served(t, p, got, time.Second, "reserve connection discarded")
}

// Raising reserve_pool_size (a reload or SET; SetConfig) while a client
// waits on a full pool does not serve it: the reserve timer is armed only
// when a waiter queues (queueLocked) and SetConfig only refills within
// Size. A client already waiting longer than reserve_pool_timeout times
// out with 53300 unless yet another client happens to queue after the
// change. Expected: the waiting client gets a reserve connection (it has
// waited reserve_pool_timeout), as raising pool_size lets it connect.
func TestPool2ReviewReserveRaisedServesWaiter(t *testing.T) {
	p, _ := newPool(t, pool.Config{Size: 1, AcquireTimeout: 4 * time.Second})
	a, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release(a)
	got := rvp2AcquireAsync(t, p)
	time.Sleep(300 * time.Millisecond)
	p.SetConfig(pool.Config{Size: 1, ReservePool: 1, ReserveTimeout: 100 * time.Millisecond, AcquireTimeout: 4 * time.Second})
	rvp2Served(t, p, got, time.Second, "reserve_pool_size raised to 1")
}

// The janitor reserves slots for min_idle before it connects; when that
// connect fails it gives the slots back (unreserveLocked) and lets other
// pools of its limits use them (refillGroup), but never calls
// refillLocked for its own pool. A client that queued behind the
// janitor's reserved slot (the pool looked full) is not woken: it waits
// for the janitor's next round (a second later) or times out with 53300,
// although the pool has room and the server accepts connections again
// (e.g. the janitor's connect hit "the database system is starting up"
// during a restart). Every other place that frees a slot (Discard,
// ReturnSlot, closeLocked, Kick, SetConfig) refills. pool.go janitor,
// the `if err != nil` branch after p.open.
func TestPool2ReviewMinIdleConnectFailureWakesWaiter(t *testing.T) {
	c := pgtest.Shared(t)
	base, err := pool.URLConnector(c.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	connect := func(ctx context.Context, database, user string) (*pgconn.PgConn, error) {
		if calls.Add(1) == 1 { // the janitor's first min_idle connect
			close(entered)
			<-release
			return nil, errors.New("FATAL: the database system is starting up (SQLSTATE 57P03)")
		}
		return base(ctx, database, user)
	}
	p := pool.New("postgres", "postgres", pool.Config{Size: 1, MinIdle: 1, AcquireTimeout: 600 * time.Millisecond}, connect, nil)
	t.Cleanup(p.Close)
	select {
	case <-entered:
	case <-time.After(3 * time.Second):
		t.Fatal("the janitor did not connect for min_idle")
	}
	got := rvp2AcquireAsync(t, p) // queued: the janitor holds the only slot
	close(release)                // its connect fails; the slot is free
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("a client waiting while the min_idle connect failed got %v; want a connection (the pool had room and the server was up)", r.err)
		}
		p.Release(r.c)
	case <-time.After(3 * time.Second):
		t.Fatal("the waiting client hangs")
	}
}

// PAUSE (console) ends with Disconnect: the idle connections close and
// none opens again, "not even for --min-idle", until RESUME
// (docs/qprouter.md, PAUSE). But TimeoutError, which the event loop calls
// when a client queued on the pool (WaitAsync, e.g. since before the
// pause) reaches its acquire timeout, clears p.disconnected, so the
// janitor's next round reconnects min_idle connections to the server the
// PAUSE was meant to let go of (typically for its restart). pool.go
// TimeoutError (p.disconnected = false); proxy/loop.go onWaitTimeout.
func TestPool2ReviewTimeoutDuringPauseKeepsDisconnected(t *testing.T) {
	p, _ := newPool(t, pool.Config{Size: 2, MinIdle: 1})
	deadline := time.Now().Add(4 * time.Second)
	for p.Stat().Idle < 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if st := p.Stat(); st.Idle != 1 {
		t.Fatalf("min_idle not reached: %+v", st)
	}
	p.SetHold(func() bool { return true }) // paused
	p.Disconnect()                         // PAUSE done: idle connections closed
	if st := p.Stat(); st.Idle != 0 {
		t.Fatalf("after Disconnect: %+v", st)
	}
	_ = p.TimeoutError() // a client queued on the event loop times out meanwhile
	time.Sleep(2200 * time.Millisecond)
	if st := p.Stat(); st.Idle != 0 || st.Active != 0 {
		t.Errorf("a paused, disconnected pool opened server connections again after a waiter's timeout: %+v; want none until RESUME", st)
	}
}
