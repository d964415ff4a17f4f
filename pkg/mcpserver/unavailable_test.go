package mcpserver

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/client"
	"github.com/qpkit/qpkit/pkg/pgexec"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// TestDatabaseDownAndBack starts the server while the database is down,
// answers "database unavailable" promptly, and recovers without a restart
// of the server once the database is back.
func TestDatabaseDownAndBack(t *testing.T) {
	db := pgtest.Start(t, pgtest.Options{})
	if err := db.StopServer(); err != nil {
		t.Fatal(err)
	}
	pcfg, err := pgxpool.ParseConfig(db.URL())
	if err != nil {
		t.Fatal(err)
	}
	ConfigureLazyPool(pcfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		t.Fatalf("pool while the database is down: %v", err)
	}
	t.Cleanup(pool.Close)
	srv, err := New(Config{Pool: pool})
	if err != nil {
		t.Fatalf("server while the database is down: %v", err)
	}
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	c = start(t, c)

	down := func(tool string, args map[string]any) {
		t.Helper()
		t0 := time.Now()
		text, isErr := call(t, c, tool, args)
		if !isErr || !strings.HasPrefix(text, "database unavailable: ") {
			t.Errorf("%s while down: %q (isError %v), want database unavailable", tool, text, isErr)
		}
		if d := time.Since(t0); d > 3*time.Second {
			t.Errorf("%s while down took %v", tool, d)
		}
	}
	down("run_select", map[string]any{"sql": "SELECT 1"})
	down("list_schemas", nil)

	if err := db.StartServer(); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if text, isErr := call(t, c, "run_select", map[string]any{"sql": "SELECT 1 AS one"}); isErr || text != "one:int4\n1\n(1 rows)" {
		t.Fatalf("after start: %q (isError %v)", text, isErr)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("first call after start took %v", d)
	}

	// A restart under a warm pool: the stale connections are replaced.
	if err := db.StopServer(); err != nil {
		t.Fatal(err)
	}
	down("run_select", map[string]any{"sql": "SELECT 1"})
	if err := db.StartServer(); err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	if text, isErr := call(t, c, "run_select", map[string]any{"sql": "SELECT 2 AS two"}); isErr || text != "two:int4\n2\n(1 rows)" {
		t.Fatalf("after restart: %q (isError %v)", text, isErr)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("first call after restart took %v", d)
	}

	// A restart nobody saw: the pool still holds the dropped connections.
	if err := db.StopServer(); err != nil {
		t.Fatal(err)
	}
	if err := db.StartServer(); err != nil {
		t.Fatal(err)
	}
	if text, isErr := call(t, c, "run_select", map[string]any{"sql": "SELECT 3 AS three"}); isErr || text != "three:int4\n3\n(1 rows)" {
		t.Fatalf("after an unseen restart: %q (isError %v)", text, isErr)
	}
}

// TestRestartDuringConcurrentRun restarts the database while 4 clients
// call run_select in a loop on a pool of 4. Every call must end with a
// result or a clean tool error (never a transport error or a hang), and
// once the database is back every client must succeed within 2 s.
func TestRestartDuringConcurrentRun(t *testing.T) {
	db := pgtest.Start(t, pgtest.Options{})
	pcfg, err := pgxpool.ParseConfig(db.URL())
	if err != nil {
		t.Fatal(err)
	}
	pcfg.MaxConns = 4
	ConfigureLazyPool(pcfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	srv, err := New(Config{Pool: pool, AllowFunctions: []string{"pg_sleep"}})
	if err != nil {
		t.Fatal(err)
	}
	const workers = 4
	var (
		mu        sync.Mutex
		restarted time.Time // when the database accepted connections again
		stop      atomic.Bool
		wg        sync.WaitGroup
		errKinds  = map[string]int{}
		lateFails []string
		okAfter   [workers]time.Time
	)
	for w := range workers {
		c, err := client.NewInProcessClient(srv)
		if err != nil {
			t.Fatal(err)
		}
		c = start(t, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				sql := "SELECT 1 AS one"
				if i%3 == 0 {
					sql = "SELECT pg_sleep(0.05), 1 AS one"
				}
				text, isErr, err := tryCall(c, "run_select", map[string]any{"sql": sql})
				now := time.Now()
				mu.Lock()
				back := !restarted.IsZero()
				switch {
				case err != nil:
					errKinds["transport error: "+err.Error()]++
				case isErr:
					kind := text
					if i := strings.IndexAny(kind, ":("); i > 0 {
						kind = kind[:i]
					}
					errKinds[kind]++
					if back && now.Sub(restarted) > 2*time.Second {
						lateFails = append(lateFails, text)
					}
				case back && okAfter[w].IsZero():
					okAfter[w] = now
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	if err := db.StopServer(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := db.StartServer(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	restarted = time.Now()
	mu.Unlock()
	time.Sleep(3 * time.Second)
	stop.Store(true)
	wg.Wait()

	t.Logf("tool errors by kind: %v", errKinds)
	for kind := range errKinds {
		// Allowed: the database going away under a call, or not being there.
		if !strings.HasPrefix(kind, "database unavailable") && !strings.HasPrefix(kind, "ERROR 57P01") {
			t.Errorf("unexpected error kind %q", kind)
		}
	}
	for w, at := range okAfter {
		if at.IsZero() {
			t.Errorf("client %d never succeeded after the restart", w)
		} else if d := at.Sub(restarted); d > 2*time.Second {
			t.Errorf("client %d first succeeded %v after the restart", w, d)
		}
	}
	if len(lateFails) > 0 {
		t.Errorf("%d calls failed more than 2 s after the restart; first: %s", len(lateFails), lateFails[0])
	}
	if st := pool.Stat(); st.TotalConns() > 4 || st.AcquiredConns() != 0 {
		t.Errorf("pool after the run: total %d, acquired %d", st.TotalConns(), st.AcquiredConns())
	}
}

// TestPoolBusyIsNotUnavailable: a call that finds every connection busy for
// the whole acquire timeout gets a plain "try again later" tool error,
// neither "database unavailable" nor a retry, and the pool then serves
// calls again.
func TestPoolBusyIsNotUnavailable(t *testing.T) {
	srv, pool := newPoolServer(t, Config{AcquireTimeout: 150 * time.Millisecond, AllowFunctions: []string{"pg_sleep"}}, 1)
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	c = start(t, c)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if text, isErr := call(t, c, "run_select", map[string]any{"sql": "SELECT pg_sleep(1.5)"}); isErr {
			t.Errorf("the call holding the connection: %s", text)
		}
	}()
	for pool.Stat().AcquiredConns() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	text, isErr := call(t, c, "run_select", map[string]any{"sql": "SELECT 1"})
	if want := "pgexec: no database connection free within 150ms (all 1 in use by other calls); try again later"; !isErr || text != want {
		t.Fatalf("busy pool: %q (isError %v), want %q", text, isErr, want)
	}
	wg.Wait()
	if text, isErr := call(t, c, "run_select", map[string]any{"sql": "SELECT 1 AS one"}); isErr || text != "one:int4\n1\n(1 rows)" {
		t.Fatalf("after the busy call: %q (isError %v)", text, isErr)
	}
}

// TestProtocolErrorIsNotUnavailable: 08P01 is a statement's own error (a
// Bind with the wrong number of parameters), not a lost connection, so it
// is neither retried nor reported as "database unavailable"; the rest of
// class 08 is.
func TestProtocolErrorIsNotUnavailable(t *testing.T) {
	ctx := context.Background()
	for code, want := range map[string]bool{"08P01": false, "08006": true, "08001": true, "57P01": true, "42601": false} {
		if got := isUnavailable(ctx, &pgexec.QueryError{SQLState: code}); got != want {
			t.Errorf("SQLSTATE %s: unavailable %v, want %v", code, got, want)
		}
	}
}
