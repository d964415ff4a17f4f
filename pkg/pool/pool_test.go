package pool_test

import (
	"context"
	"errors"
	"github.com/jackc/pgx/v5/pgconn"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/pool"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func newPool(t *testing.T, cfg pool.Config) (*pool.Pool, *pgtest.Cluster) {
	c := pgtest.Shared(t)
	connect, err := pool.URLConnector(c.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := pool.New("postgres", "postgres", cfg, connect, nil)
	t.Cleanup(p.Close)
	return p, c
}

func TestAcquireReleaseTimeout(t *testing.T) {
	p, _ := newPool(t, pool.Config{Size: 2, AcquireTimeout: 200 * time.Millisecond})
	ctx := context.Background()
	a, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a.PID == 0 || a.PID == b.PID || a.Params["server_version"] == "" {
		t.Fatalf("connections: %d %d %v", a.PID, b.PID, a.Params)
	}
	t0 := time.Now()
	_, err = p.Acquire(ctx)
	if !errors.Is(err, pool.ErrTimeout) || !strings.Contains(err.Error(), "within 200ms for pool postgres/postgres") {
		t.Fatalf("full pool: %v", err)
	}
	if d := time.Since(t0); d < 150*time.Millisecond || d > 2*time.Second {
		t.Errorf("waited %s", d)
	}
	if st := p.Stat(); st.Active != 2 || st.Idle != 0 || st.Size != 2 {
		t.Errorf("stat: %+v", st)
	}
	// A waiter gets the connection released to it.
	got := make(chan *pool.Conn)
	go func() {
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	time.Sleep(50 * time.Millisecond)
	p.Release(a)
	if c := <-got; c.PID != a.PID {
		t.Errorf("waiter got %d, want %d", c.PID, a.PID)
	}
	if st, err := b.Exec(ctx, "select 1"); err != nil || st != 'I' {
		t.Fatalf("exec: %c %v", st, err)
	}
	if _, err := b.Exec(ctx, "select 1/0"); err == nil || !strings.Contains(err.Error(), "22012") {
		t.Fatalf("exec error: %v", err)
	}
	p.Reset(ctx, b)
	if st := p.Stat(); st.Idle != 1 {
		t.Errorf("after reset: %+v", st)
	}
}

// A server connection that died while idle is replaced on checkout.
func TestHealthCheck(t *testing.T) {
	p, c := newPool(t, pool.Config{Size: 1, HealthCheckAfter: time.Millisecond})
	ctx := context.Background()
	a, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid := a.PID
	p.Release(a)
	admin, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "select pg_terminate_backend($1)", int(pid)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	b, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b.PID == pid {
		t.Fatal("got the dead connection back")
	}
	if _, err := b.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	p.Release(b)
}

// A server connection terminated while idle is dropped at checkout
// without a round trip, long before HealthCheckAfter (30 s by default):
// by Acquire, by TryAcquire (the event loop's), and by Acquire after a
// wait. The cheap peek needs the connection idle a while (peekAfter).
func TestDeadIdleConnPeeked(t *testing.T) {
	p, c := newPool(t, pool.Config{Size: 2})
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	kill := func(pid uint32) {
		t.Helper()
		if _, err := admin.Exec(ctx, "select pg_terminate_backend($1)", int(pid)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // gone, and idle past peekAfter
	}
	for _, name := range []string{"Acquire", "TryAcquire"} {
		a, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		dead := a.PID
		p.Release(a)
		kill(dead)
		var b *pool.Conn
		if name == "Acquire" {
			if b, err = p.Acquire(ctx); err != nil {
				t.Fatal(err)
			}
		} else if b = p.TryAcquire(nil); b == nil {
			b, err = p.Acquire(ctx) // the dead one dropped, nothing idle left
			if err != nil {
				t.Fatal(err)
			}
		}
		if b.PID == dead {
			t.Fatalf("%s handed out the terminated connection %d", name, dead)
		}
		if st, err := b.Exec(ctx, "select 1"); err != nil || st != 'I' {
			t.Fatalf("%s: %c %v", name, st, err)
		}
		p.Release(b)
		if st := p.Stat(); st.Active != 0 || st.Size > 2 {
			t.Fatalf("%s: %+v", name, st)
		}
	}
}

// A connection whose socket the proxy closed under it (a timeout, a
// kill) and that still came back to the pool is not handed out again.
func TestClosedIdleConnPeeked(t *testing.T) {
	p, _ := newPool(t, pool.Config{Size: 2})
	ctx := context.Background()
	a, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	closed := a.PID
	a.Net.Close()
	p.Release(a)
	time.Sleep(200 * time.Millisecond) // idle past peekAfter
	b, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release(b)
	if b.PID == closed {
		t.Fatalf("handed out the connection %d whose socket was closed", closed)
	}
	if st, err := b.Exec(ctx, "select 1"); err != nil || st != 'I' {
		t.Fatalf("%c %v", st, err)
	}
}

func TestMinIdleAndResize(t *testing.T) {
	p, _ := newPool(t, pool.Config{Size: 3, MinIdle: 2})
	deadline := time.Now().Add(5 * time.Second)
	for p.Stat().Idle < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if st := p.Stat(); st.Idle != 2 {
		t.Fatalf("min idle: %+v", st)
	}
	p.SetConfig(pool.Config{Size: 1})
	if st := p.Stat(); st.Idle > 1 || st.Size != 1 {
		t.Fatalf("after shrinking: %+v", st)
	}
}

// With RoundRobin the idle connection that waited longest goes out first,
// so that back-to-back checkouts go round every connection; by default the
// most recently used one goes out again.
func TestRoundRobin(t *testing.T) {
	for _, rr := range []bool{false, true} {
		p, _ := newPool(t, pool.Config{Size: 3, RoundRobin: rr})
		ctx := context.Background()
		var open []*pool.Conn
		for range 3 {
			c, err := p.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			open = append(open, c)
		}
		for _, c := range open {
			p.Release(c)
		}
		var pids []uint32
		for range 6 {
			c, err := p.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pids = append(pids, c.PID)
			p.Release(c)
		}
		distinct := map[uint32]bool{}
		for _, pid := range pids {
			distinct[pid] = true
		}
		if want := map[bool]int{false: 1, true: 3}[rr]; len(distinct) != want || (rr && (pids[0] != open[0].PID || pids[3] != pids[0])) {
			t.Errorf("RoundRobin %v: checkouts went to %v (opened %d, %d, %d)", rr, pids, open[0].PID, open[1].PID, open[2].PID)
		}
		// TryAcquire takes the same order.
		c := p.TryAcquire(nil)
		if c == nil {
			t.Fatal("TryAcquire: no idle connection")
		}
		if next := pids[len(pids)-1]; (rr && c.PID == next) || (!rr && c.PID != next) {
			t.Errorf("RoundRobin %v: TryAcquire gave %d after %v", rr, c.PID, pids)
		}
		p.Release(c)
	}
}

// Reconnect closes the idle connections at once and a handed-out one when
// it comes back; connections opened after it are kept.
func TestReconnect(t *testing.T) {
	p, _ := newPool(t, pool.Config{Size: 2})
	ctx := context.Background()
	a, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p.Release(b) // idle
	p.Reconnect()
	if st := p.Stat(); st.Idle != 0 || st.Active != 1 {
		t.Fatalf("after Reconnect: %+v, want the idle one closed", st)
	}
	if !a.Stat().CloseNeeded {
		t.Error("the handed-out connection is not marked to close")
	}
	p.Release(a)
	if st := p.Stat(); st.Idle != 0 || st.Active != 0 {
		t.Fatalf("the marked connection came back to %+v, want it closed", st)
	}
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.PID == a.PID || c.PID == b.PID || c.Stat().CloseNeeded {
		t.Errorf("after Reconnect got pid %d (old %d, %d), close needed %v", c.PID, a.PID, b.PID, c.Stat().CloseNeeded)
	}
	p.Release(c)
	if st := p.Stat(); st.Idle != 1 {
		t.Errorf("a new connection was not kept: %+v", st)
	}
}

// A connection Release hands straight to a waiter was never idle: the
// waiter's Acquire must not health-check it (a round trip) as if it had
// sat idle since it last went idle, or under saturation every checkout
// pays one once connections are HealthCheckAfter old.
func TestHandOverNotHealthChecked(t *testing.T) {
	c := pgtest.Shared(t)
	base, err := pgconn.ParseConfig(c.URL())
	if err != nil {
		t.Fatal(err)
	}
	var wrote atomic.Int64
	base.DialFunc = pool.CountingDial(base.DialFunc, nil, func(n int) { wrote.Add(int64(n)) })
	connect := func(ctx context.Context, database, user string) (*pgconn.PgConn, error) {
		cfg := base.Copy()
		cfg.Database, cfg.User = database, user
		return pgconn.ConnectConfig(ctx, cfg)
	}
	p := pool.New("postgres", "postgres", pool.Config{Size: 1, HealthCheckAfter: 150 * time.Millisecond}, connect, nil)
	t.Cleanup(p.Close)
	ctx := context.Background()
	a, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // in use all along, past HealthCheckAfter
	got := make(chan *pool.Conn, 1)
	go func() {
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	for p.Stat().Waiting == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	before := wrote.Load()
	p.Release(a)
	b := <-got
	if b == nil {
		t.Fatal("no connection")
	}
	defer p.Release(b)
	if n := wrote.Load() - before; n != 0 {
		t.Errorf("the waiter's checkout of a connection handed over by Release wrote %d bytes to the server (a health check); it was never idle", n)
	}
}

// A released connection goes to a WaitAsync waiter that prefers it only
// ahead of other young WaitAsync waiters, never ahead of an Acquire
// waiter that queued first: event-loop sessions that keep queueing must
// not starve a goroutine waiter (session mode, a settings replay, a loop
// session handed back) into its timeout.
func TestPreferDoesNotStarveAcquire(t *testing.T) {
	c := pgtest.Shared(t)
	connect, err := pool.URLConnector(c.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := pool.New("postgres", "postgres", pool.Config{Size: 1, AcquireTimeout: time.Second}, connect, nil)
	t.Cleanup(p.Close)
	ctx := context.Background()
	held, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	acq := make(chan error, 1)
	go func() {
		c, err := p.Acquire(ctx)
		if err == nil {
			p.Release(c)
		}
		acq <- err
	}()
	for p.Stat().Waiting == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	// Loop sessions: each queues before the previous one's transaction
	// ends, as under steady load.
	everything := func(*pool.Conn) bool { return true }
	for rounds := 0; ; rounds++ {
		ch := p.WaitAsync(nil, everything)
		if ch == nil {
			t.Fatal("WaitAsync: nil")
		}
		time.Sleep(20 * time.Millisecond) // the transaction
		p.Release(held)
		select {
		case err := <-acq:
			if err != nil {
				t.Fatalf("the Acquire waiter, first in line, got %v while the connection went round %d later waiters", err, rounds)
			}
			if !p.CancelWait(ch) {
				p.Release(<-ch)
			}
			return
		default:
		}
		held = <-ch
		if held == nil {
			t.Fatal("slot")
		}
	}
}

// While held (a proxy's PAUSE), a released connection goes idle rather
// than to a waiter; Kick then hands it over, unless it sat idle past
// HealthCheckAfter: a waiter on an event loop takes what it is handed
// unchecked, so that one closes and the waiter gets room to connect in.
func TestHoldAndKick(t *testing.T) {
	for _, stale := range []bool{false, true} {
		p, _ := newPool(t, pool.Config{Size: 1, HealthCheckAfter: 200 * time.Millisecond})
		held := true
		var mu sync.Mutex
		p.SetHold(func() bool { mu.Lock(); defer mu.Unlock(); return held })
		c, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ch := p.WaitAsync(nil, nil)
		if ch == nil {
			t.Fatal("WaitAsync: nil with the only connection in use")
		}
		p.Release(c)
		select {
		case got := <-ch:
			t.Fatalf("stale=%v: a held pool handed %v to its waiter", stale, got)
		case <-time.After(50 * time.Millisecond):
		}
		if st := p.Stat(); st.Idle != 1 || st.Waiting != 1 {
			t.Fatalf("stale=%v: while held: %+v", stale, st)
		}
		if stale {
			time.Sleep(250 * time.Millisecond)
		}
		mu.Lock()
		held = false
		mu.Unlock()
		p.Kick()
		select {
		case got := <-ch:
			if stale && got != nil {
				t.Errorf("a connection idle past HealthCheckAfter was handed over unchecked")
			}
			if !stale && got != c {
				t.Errorf("Kick handed %v, want the idle connection", got)
			}
			if got == nil {
				p.ReturnSlot()
			} else {
				p.Release(got)
			}
		case <-time.After(time.Second):
			t.Fatalf("stale=%v: Kick handed nothing", stale)
		}
	}
}
