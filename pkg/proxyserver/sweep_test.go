package proxyserver

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// In trust mode with a server_url (the defaults), every database name a
// client asks for makes a pool with a janitor goroutine, even when the
// server refuses the database: pools unused for route.Pools.UnusedTimeout
// are removed, so such names cannot grow the proxy for good.
func TestUnusedPoolsRemoved(t *testing.T) {
	cl := pgtest.Start(t, pgtest.Options{})
	c := valid()
	c.ServerURL = fmt.Sprintf("postgres://127.0.0.1:%d/postgres?sslmode=disable", cl.Port)
	s, addr := serveAfter(t, Options{Config: c}, func(s *Server) { s.pools.UnusedTimeout = 100 * time.Millisecond })
	ctx := context.Background()
	g0 := runtime.NumGoroutine()
	const n = 40
	for i := range n {
		url := fmt.Sprintf("postgres://postgres@%s/nodb%d?sslmode=disable&connect_timeout=5", addr, i)
		if cn, err := pgx.Connect(ctx, url); err == nil {
			cn.Close(ctx)
			t.Fatalf("client %d connected to a database that does not exist", i)
		}
	}
	time.Sleep(2500 * time.Millisecond) // two sweeps, a second apart
	if got := len(s.proxy.Pools()); got > 0 {
		t.Errorf("%d refused connections to made-up databases left %d pools (goroutines %d -> %d)",
			n, got, g0, runtime.NumGoroutine())
	}
}

// A reload that changes a [databases] entry's forced user (user= in the
// URL) makes a new pool (database, new user); the old pool (database, old
// user), once no client uses it, is removed with its server connections,
// where its janitor used to keep min_idle of them open as the old user
// forever (counted against the database's max_db_connections too).
func TestReloadRemovesLeftBehindPool(t *testing.T) {
	cl := pgtest.Start(t, pgtest.Options{})
	execForTest(t, cl.URL(), "CREATE ROLE rv_u1 LOGIN", "CREATE ROLE rv_u2 LOGIN")
	entry := func(user string) map[string]string {
		return map[string]string{"app": fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?sslmode=disable", user, cl.Port)}
	}
	c := valid()
	c.ServerURL = ""
	c.Databases = entry("rv_u1")
	c.MinIdle = 1
	c.IdleTimeout = time.Hour
	c.MaxLifetime = time.Hour
	var mu sync.Mutex
	next := c
	s, addr := serveForTest(t, Options{Config: c, Load: func() (Config, error) {
		mu.Lock()
		defer mu.Unlock()
		return next, nil
	}})
	ctx := context.Background()
	url := "postgres://whoever@" + addr + "/app?sslmode=disable"
	cn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	cn.Close(ctx)
	count := func(user string) int {
		return countForTest(t, cl.URL(), fmt.Sprintf("SELECT count(*) FROM pg_stat_activity WHERE usename = '%s'", user))
	}
	if got := count("rv_u1"); got < 1 {
		t.Fatalf("before the reload: %d connections as rv_u1", got)
	}
	mu.Lock()
	next.Databases = entry("rv_u2")
	mu.Unlock()
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	cn, err = pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	var user string
	if err := cn.QueryRow(ctx, "SELECT current_user").Scan(&user); err != nil || user != "rv_u2" {
		t.Fatalf("after the reload: served as %q (%v)", user, err)
	}
	cn.Close(ctx)
	time.Sleep(3 * time.Second) // a few janitor ticks
	if got := count("rv_u1"); got != 0 {
		var names []string
		for _, p := range s.proxy.Pools() {
			names = append(names, p.Database+"/"+p.User)
		}
		t.Errorf("3s after a reload moved database app from user rv_u1 to rv_u2, %d server connections as rv_u1 are open (pools %v): "+
			"the left-behind pool keeps its connections", got, names)
	}
}
