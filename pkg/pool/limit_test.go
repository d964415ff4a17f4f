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
	go func() {
		c, err := b.Acquire(context.Background())
		if err == nil {
			b.Release(c)
		}
		got <- err
	}()
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
	go func() {
		c, err := b.Acquire(context.Background())
		if err == nil {
			b.Release(c)
		}
		got <- err
	}()
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
