package proxyserver

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// With --auth-user (and no auth_dbname), the database of a lookup is the
// name an unauthenticated client sends: a failed lookup keeps no pool,
// and the pools kept are bounded, so a client that never logs in cannot
// grow the proxy.
func TestAuthQueryPoolsBounded(t *testing.T) {
	cl := pgtest.Start(t, pgtest.Options{})
	c := valid()
	c.ServerURL = fmt.Sprintf("postgres://127.0.0.1:%d/postgres?sslmode=disable", cl.Port)
	c.AuthUser = "postgres"
	s, addr := serveForTest(t, Options{Config: c})
	ctx := context.Background()
	g0 := runtime.NumGoroutine()
	const n = 40
	for i := range n {
		url := fmt.Sprintf("postgres://nobody%d:pw@%s/nodb%d?sslmode=disable&connect_timeout=5", i, addr, i)
		if cn, err := pgx.Connect(ctx, url); err == nil {
			cn.Close(ctx)
			t.Fatalf("client %d logged in", i)
		}
	}
	time.Sleep(200 * time.Millisecond)
	s.authq.mu.Lock()
	pools := s.authq.pools.Len()
	s.authq.mu.Unlock()
	if pools > 1 {
		t.Errorf("%d failed logins to made-up databases left %d auth-query pools behind (goroutines %d -> %d); "+
			"lookup pools of client-chosen names must be bounded or dropped when the lookup fails", n, pools, g0, runtime.NumGoroutine())
	}
}
