package mcpserver

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/qpkit/qpkit/pkg/pgexec"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// newPoolServer is newServer with a pool of size conns, returning the pool
// too so a test can read its stats.
func newPoolServer(t testing.TB, cfg Config, conns int) (*server.MCPServer, *pgxpool.Pool) {
	t.Helper()
	db := pgtest.Shared(t)
	ctx := context.Background()
	setupOnce.Do(func() {
		conn, err := pgx.Connect(ctx, db.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, fixture); err != nil {
			t.Fatal(err)
		}
	})
	pool, err := pgexec.NewPool(ctx, db.URL(), conns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	cfg.Pool = pool
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv, pool
}

// TestPoolDoesNotLeakAfterTimeouts runs 1,000 run_select calls that all hit
// the statement timeout, 8 at a time on a pool of 4, and checks that the
// pool is whole and clean afterwards.
func TestPoolDoesNotLeakAfterTimeouts(t *testing.T) {
	const (
		calls   = 1000
		workers = 8
		conns   = 4
	)
	srv, pool := newPoolServer(t, Config{StatementTimeout: 5 * time.Millisecond, AllowFunctions: []string{"pg_sleep"}}, conns)
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	c = start(t, c)

	var next, bad atomic.Int64
	var firstBad atomic.Value
	var wg sync.WaitGroup
	t0 := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= calls {
				text, isErr, err := tryCall(c, "run_select", map[string]any{"sql": "select pg_sleep(0.05)"})
				if err != nil || !isErr || !strings.Contains(text, "timed out") {
					if bad.Add(1) == 1 {
						firstBad.Store(text + " / " + errString(err))
					}
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d timed-out calls in %v", calls, time.Since(t0).Round(time.Millisecond))
	if n := bad.Load(); n > 0 {
		t.Fatalf("%d of %d calls did not time out with isError; first: %v", n, calls, firstBad.Load())
	}

	st := pool.Stat()
	if st.TotalConns() > conns || st.AcquiredConns() != 0 {
		t.Errorf("pool after timeouts: total %d (max %d), acquired %d", st.TotalConns(), conns, st.AcquiredConns())
	}

	// Nothing of the pool sits in a transaction or holds an advisory lock.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.Shared(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var inTx, locks int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'
		AND state LIKE 'idle in transaction%'`).Scan(&inTx); err != nil {
		t.Fatal(err)
	}
	if inTx != 0 {
		t.Errorf("%d backends idle in transaction", inTx)
	}

	// A normal call works, and the connection it used comes back clean.
	text, isErr := call(t, c, "run_select", map[string]any{"sql": "SELECT 1 AS one"})
	if isErr || parseTSV(t, text).Rows[0][0] != "1" {
		t.Fatalf("normal call after timeouts: %v %s", isErr, text)
	}
	text, isErr = call(t, c, "run_select", map[string]any{"sql": "SHOW statement_timeout"})
	if isErr || parseTSV(t, text).Rows[0][0] != "5ms" {
		t.Errorf("statement_timeout after timeouts: %v %s", isErr, text)
	}
	text, isErr = call(t, c, "run_select", map[string]any{"sql": "SHOW transaction_read_only"})
	if isErr || parseTSV(t, text).Rows[0][0] != "on" {
		t.Errorf("transaction_read_only after timeouts: %v %s", isErr, text)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'`).Scan(&locks); err != nil {
		t.Fatal(err)
	}
	if locks != 0 {
		t.Errorf("%d advisory locks held", locks)
	}
	if st := pool.Stat(); st.TotalConns() > conns || st.AcquiredConns() != 0 {
		t.Errorf("pool after normal calls: total %d, acquired %d", st.TotalConns(), st.AcquiredConns())
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// tryCall is call without t, for goroutines.
func tryCall(c *client.Client, tool string, args map[string]any) (string, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var req mcp.CallToolRequest
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError, nil
}
