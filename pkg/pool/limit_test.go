package pool_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/pool"
)

// limitedPools returns two pools of one user (databases postgres and
// template1) that share a max_user_connections limit of cap.
func limitedPools(t *testing.T, cap int) (a, b *pool.Pool, l *pool.Limit) {
	c := pgtest.Shared(t)
	connect, err := pool.URLConnector(c.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := pool.Config{Size: 5, AcquireTimeout: 300 * time.Millisecond, MaxUserConnections: cap}
	l = pool.NewLimit("max_user_connections of user postgres")
	a = pool.New("postgres", "postgres", cfg, connect, nil)
	b = pool.New("template1", "postgres", cfg, connect, nil)
	a.SetLimits(nil, l)
	b.SetLimits(nil, l)
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	return a, b, l
}

func acquire(t *testing.T, p *pool.Pool) *pool.Conn {
	t.Helper()
	c, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatalf("acquire from %s: %v", p.Name(), err)
	}
	return c
}

// acquireRelease takes a connection from p and gives it back, reporting
// the acquire's error on got.
func acquireRelease(p *pool.Pool, got chan<- error) {
	c, err := p.Acquire(context.Background())
	if err == nil {
		p.Release(c)
	}
	got <- err
}

func wantOpen(t *testing.T, l *pool.Limit, want int) {
	t.Helper()
	if open, _ := l.Stat(); open != want {
		t.Errorf("limit counts %d connections, want %d", open, want)
	}
}

// A cap shared by two pools: a full limit times out naming it, an idle
// connection of the other pool is closed to make room, a connection
// coming back to a pool nobody waits on goes to the other pool's waiter,
// and raising the cap lets a waiter connect at once.
func TestSharedLimit(t *testing.T) {
	a, b, l := limitedPools(t, 2)
	a1, a2 := acquire(t, a), acquire(t, a)
	wantOpen(t, l, 2)

	_, err := b.Acquire(context.Background())
	if !errors.Is(err, pool.ErrTimeout) || !strings.Contains(err.Error(), "for pool template1/postgres (max_user_connections of user postgres: 2 reached)") {
		t.Fatalf("over the cap: %v", err)
	}
	wantOpen(t, l, 2)

	// An idle connection of a makes room for b.
	a.Release(a2)
	if st := a.Stat(); st.Idle != 1 {
		t.Fatalf("a: %+v", st)
	}
	b1 := acquire(t, b)
	if st := a.Stat(); st.Idle != 0 || st.Active != 1 {
		t.Errorf("a after the eviction: %+v", st)
	}
	if b1.PID == a2.PID {
		t.Error("b got a's connection")
	}
	wantOpen(t, l, 2)

	// b waits on the limit; a's connection coming back is closed for it.
	got := make(chan error, 1)
	go acquireRelease(b, got)
	time.Sleep(50 * time.Millisecond)
	a.Release(a1)
	if err := <-got; err != nil {
		t.Fatalf("waiter on the limit: %v", err)
	}
	if st := a.Stat(); st.Idle != 0 || st.Active != 0 {
		t.Errorf("a kept its connection: %+v", st)
	}
	wantOpen(t, l, 2)

	// A larger cap lets a waiter connect without anything coming back.
	a3 := acquire(t, a) // evicts b's idle connection
	go acquireRelease(b, got)
	time.Sleep(50 * time.Millisecond)
	cfg := b.Config()
	cfg.MaxUserConnections = 3
	b.SetConfig(cfg)
	if err := <-got; err != nil {
		t.Fatalf("waiter after raising the cap: %v", err)
	}
	wantOpen(t, l, 3)
	a.Release(a3)
	b.Release(b1)
}

// A client that waited ReserveTimeout gets a connection beyond Size, which
// closes when it comes back with nobody waiting.
func TestReservePool(t *testing.T) {
	p, _ := newPool(t, pool.Config{Size: 1, ReservePool: 1, ReserveTimeout: 200 * time.Millisecond, AcquireTimeout: 2 * time.Second})
	a := acquire(t, p)
	t0 := time.Now()
	b := acquire(t, p)
	if d := time.Since(t0); d < 150*time.Millisecond {
		t.Errorf("reserve connection after %s, before the reserve timeout", d)
	}
	if b.PID == a.PID {
		t.Fatal("same connection twice")
	}
	// Size + ReservePool reached: the next client waits for a release.
	got := make(chan *pool.Conn, 1)
	go func() { got <- acquire(t, p) }()
	time.Sleep(400 * time.Millisecond)
	select {
	case c := <-got:
		t.Fatalf("third connection %d beyond size 1 + reserve 1", c.PID)
	default:
	}
	p.Release(b)
	c := <-got
	if c.PID != b.PID {
		t.Errorf("waiter got %d, want the released %d", c.PID, b.PID)
	}
	p.Release(c) // beyond Size, nobody waiting: closed
	if st := p.Stat(); st.Idle != 0 || st.Active != 1 {
		t.Errorf("after the reserve connection came back: %+v", st)
	}
	p.Release(a)
	if st := p.Stat(); st.Idle != 1 {
		t.Errorf("after the last release: %+v", st)
	}
}

// One timer serves the reserve for every waiter: the second waiter, queued
// later, gets its reserve connection once it has waited ReserveTimeout
// itself, after the timer served the first (before 2026-12-05 each waiter
// armed a timer of its own that nothing stopped, and with PgBouncer's
// reserve_pool_timeout = 0, read as 100 years, they piled up).
func TestReserveTimerServesLaterWaiters(t *testing.T) {
	p, _ := newPool(t, pool.Config{Size: 1, ReservePool: 2, ReserveTimeout: 300 * time.Millisecond, AcquireTimeout: 5 * time.Second})
	a := acquire(t, p)
	defer p.Release(a)
	type got struct {
		c     *pool.Conn
		after time.Duration
	}
	wait := func(out chan<- got) {
		t0 := time.Now()
		c := acquire(t, p)
		out <- got{c, time.Since(t0)}
	}
	first, second := make(chan got, 1), make(chan got, 1)
	go wait(first)
	time.Sleep(150 * time.Millisecond)
	go wait(second)
	for name, ch := range map[string]chan got{"first": first, "second": second} {
		select {
		case g := <-ch:
			if g.after < 250*time.Millisecond {
				t.Errorf("%s waiter served after %s, before its reserve timeout", name, g.after)
			}
			defer p.Release(g.c)
		case <-time.After(3 * time.Second):
			t.Fatalf("%s waiter never got a reserve connection", name)
		}
	}
}

// Many clients of three pools under one cap of 3: every acquire succeeds
// (the wait is long enough), the cap is never exceeded, and at the end the
// limit counts exactly the connections the pools hold.
func TestLimitStress(t *testing.T) {
	c := pgtest.Shared(t)
	connect, err := pool.URLConnector(c.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	l := pool.NewLimit("max_user_connections of user postgres")
	cfg := pool.Config{Size: 3, AcquireTimeout: 20 * time.Second, MaxUserConnections: 3}
	var pools []*pool.Pool
	for _, db := range []string{"postgres", "template1", "postgres"} {
		p := pool.New(db, "postgres", cfg, connect, nil)
		p.SetLimits(nil, l)
		t.Cleanup(p.Close)
		pools = append(pools, p)
	}
	stop := make(chan struct{})
	peak := make(chan int)
	go func() { // the highest count seen
		most := 0
		for {
			select {
			case <-stop:
				peak <- most
				return
			default:
			}
			open, _ := l.Stat()
			most = max(most, open)
			time.Sleep(100 * time.Microsecond)
		}
	}()
	errs := make(chan error, 12)
	for g := range 12 {
		go func() {
			p := pools[g%3]
			for i := range 25 {
				cn, err := p.Acquire(context.Background())
				if err != nil {
					errs <- err
					return
				}
				if _, err := cn.Exec(context.Background(), "SELECT 1"); err != nil {
					errs <- err
					return
				}
				if i%7 == 3 {
					p.Discard(cn)
				} else {
					p.Release(cn)
				}
			}
			errs <- nil
		}()
	}
	for range 12 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	close(stop)
	if most := <-peak; most > 3 {
		t.Errorf("the limit counted %d connections at once, cap 3", most)
	}
	held := 0
	for _, p := range pools {
		st := p.Stat()
		if st.Active != 0 || st.Waiting != 0 {
			t.Errorf("%s after the clients: %+v", p.Name(), st)
		}
		held += st.Idle
	}
	if open, _ := l.Stat(); open != held || held > 3 {
		t.Errorf("the limit counts %d, the pools hold %d", open, held)
	}
}
