package pgexec

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// AcquireTimeout (new today) is "how long a call waits for a pool
// connection while every one is in use" (docs/pgexec.md; mcpg's
// --acquire-timeout-ms: "while all --pool-size are in use"). It also cuts
// the making of a new connection when none is in use: with a database
// that takes longer than AcquireTimeout to accept a session (here 1 s, by
// PostgreSQL's post_auth_delay; a distant server with TLS does the same at
// a small --acquire-timeout-ms), every call on a pool with free room fails
// with "pgexec: acquire connection: context deadline exceeded", which mcpg
// reports as "database unavailable", although no connection was busy and
// the database is up. Before today the call waited for its connection.
func TestTodayReviewAcquireTimeoutCutsConnectOfIdlePool(t *testing.T) {
	db := pgtest.Shared(t)
	cfg, err := pgxpool.ParseConfig(db.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 2
	ConfigurePool(cfg)
	cfg.ConnConfig.RuntimeParams["options"] = "-c post_auth_delay=1"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	e := newExec(t, pool, Options{AcquireTimeout: 300 * time.Millisecond})
	if st := pool.Stat(); st.AcquiredConns() != 0 {
		t.Fatalf("setup: %d connections in use", st.AcquiredConns())
	}
	if _, err := e.Run(ctx, "SELECT 1", nil, nil); err != nil {
		t.Errorf("no connection was in use, the database is up and answers in about 1 s; the call failed: %v", err)
	}
}
