// Second review of perfrun. Each test asserts what the docs and perfrun's
// own comments promise and fails on the code as reviewed.

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// TestPerf2ReviewInterruptCancelsNativeStatement: perfrun's native path
// "sends the same messages as the executor" (pkg/perf/run/native.go), and
// on SIGINT perfrun stops, keeps whole units and exits 130. But when the
// context ends, nativePath.read only sets a deadline on the socket and Call
// closes the connection; unlike pgexec (executor.go, which sends a
// CancelRequest when its context ends) it never asks the server to cancel.
// PostgreSQL does not notice a closed client while a statement runs
// (client_connection_check_interval is 0 by default), so after Ctrl-C the
// statement keeps running on the server until it ends or hits the statement
// timeout (--timeout, 60 s by default): a heavy TPC-H query keeps loading
// the machine, and a `perfrun --resume` started right away measures beside
// it. Expected: shortly after perfrun returns, the statement no longer runs.
func TestPerf2ReviewInterruptCancelsNativeStatement(t *testing.T) {
	db := pgtest.Shared(t)
	const sql = "SELECT pg_sleep(8)"
	qf := filepath.Join(t.TempDir(), "q.jsonl")
	if err := os.WriteFile(qf, []byte(`{"id":"sleepy","weight":"heavy","size":"1","sql":"`+sql+`"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mon, err := pgx.Connect(context.Background(), db.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close(context.Background())
	running := func() int {
		var n int
		if err := mon.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE query = $1 AND state = 'active' AND pid <> pg_backend_pid()`, sql).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	defer mon.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE query = $1 AND pid <> pg_backend_pid()`, sql)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Interrupt once the statement runs on the server (the cold call).
		c, err := pgx.Connect(context.Background(), db.URL())
		if err != nil {
			cancel()
			return
		}
		defer c.Close(context.Background())
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
			var n int
			if c.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE query = $1 AND state = 'active'`, sql).Scan(&n) == nil && n > 0 {
				time.Sleep(100 * time.Millisecond)
				break
			}
		}
		cancel()
	}()
	var out, errb bytes.Buffer
	args := []string{"--database-url", db.URL(), "--paths", "native", "--concurrency=", "--warmup", "0", "-n", "1",
		"--queries", qf, "--timeout", "60s"}
	start := time.Now()
	code := run(ctx, args, &out, &errb)
	if code != exitInterrupted {
		t.Fatalf("exit %d after %v, want %d (interrupted); stderr %q", code, time.Since(start), exitInterrupted, errb.String())
	}
	returned := time.Now()
	for time.Since(returned) < 2*time.Second && running() > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	if n := running(); n > 0 {
		t.Errorf("perfrun returned (exit 130) %v ago, but %q still runs on the server in %d backend(s); want it cancelled",
			time.Since(returned).Round(100*time.Millisecond), sql, n)
	}
}
