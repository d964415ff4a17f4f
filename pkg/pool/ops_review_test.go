// Operations behaviour a review of 2026-12-05 found wrong; each test's
// comment says what was wrong before the fix.

package pool_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/pool"
)

// A connection whose connect began before Reconnect (to the server the
// pool reached until then: a reload that moved the database calls
// Reconnect right after switching the target, proxyserver apply) but
// finished after it is stamped created after Reconnect (pool.go open sets
// created once connected) and so is kept for good, to the old server.
// docs/qprouter.md (RECONNECT): "so that clients get connections opened
// afresh, e.g. after the server's address changed". Expected: it is
// closed when it comes back (close_needed), as every connection that was
// under way when Reconnect came.
func TestOpsReconnectDuringConnect(t *testing.T) {
	c := pgtest.Shared(t)
	base, err := pool.URLConnector(c.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var gate atomic.Pointer[chan struct{}]
	entered := make(chan struct{}, 1)
	connect := func(ctx context.Context, database, user string) (*pgconn.PgConn, error) {
		if g := gate.Load(); g != nil {
			entered <- struct{}{}
			<-*g
		}
		return base(ctx, database, user)
	}
	p := pool.New("postgres", "postgres", pool.Config{Size: 2}, connect, nil)
	t.Cleanup(p.Close)
	g := make(chan struct{})
	gate.Store(&g)
	got := make(chan *pool.Conn, 1)
	go func() {
		cn, err := p.Acquire(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- cn
	}()
	<-entered // the connect to the old server is under way
	p.Reconnect()
	time.Sleep(20 * time.Millisecond)
	gate.Store(nil)
	close(g)
	cn := <-got
	if cn == nil {
		t.FailNow()
	}
	if !cn.Stat().CloseNeeded {
		t.Error("a connection opened from before Reconnect is not marked close_needed")
	}
	p.Release(cn)
	if st := p.Stat(); st.Idle != 0 {
		t.Errorf("the connection begun before Reconnect went idle: %+v, want it closed", st)
	}
}

// server_idle_timeout: an idle connection above min_idle is closed by the
// janitor; lifetime: a connection past it is closed when it comes back,
// not while handed out (verified correct).
func TestOpsIdleAndLifetime(t *testing.T) {
	ctx := context.Background()
	p, _ := newPool(t, pool.Config{Size: 2, IdleTimeout: 300 * time.Millisecond})
	a, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p.Release(a)
	deadline := time.Now().Add(5 * time.Second)
	for p.Stat().Idle > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if st := p.Stat(); st.Idle != 0 {
		t.Errorf("idle past idle_timeout: %+v, want it closed", st)
	}

	q, _ := newPool(t, pool.Config{Size: 2, MaxLifetime: 300 * time.Millisecond})
	b, err := q.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // past lifetime, across a janitor tick, handed out
	if st, err := b.Exec(ctx, "SELECT 1"); err != nil || st != 'I' {
		t.Fatalf("a handed-out connection past max_lifetime broke: %c %v", st, err)
	}
	q.Release(b)
	if st := q.Stat(); st.Idle != 0 || st.Active != 0 {
		t.Errorf("connection past max_lifetime came back to %+v, want it closed", st)
	}
}

// A smaller size (reload) leaves busy connections alone and closes them
// as they come back, down to the new size (verified correct).
func TestOpsShrinkKeepsBusy(t *testing.T) {
	ctx := context.Background()
	p, _ := newPool(t, pool.Config{Size: 3})
	var cs []*pool.Conn
	for range 3 {
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	p.SetConfig(pool.Config{Size: 1})
	for _, c := range cs {
		if st, err := c.Exec(ctx, "SELECT 1"); err != nil || st != 'I' {
			t.Fatalf("busy connection after the shrink: %c %v", st, err)
		}
		p.Release(c)
	}
	if st := p.Stat(); st.Idle != 1 || st.Active != 0 || st.Size != 1 {
		t.Errorf("after the shrink and the releases: %+v, want 1 idle", st)
	}
}
