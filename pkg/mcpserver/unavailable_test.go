package mcpserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/client"
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
	if text, isErr := call(t, c, "run_select", map[string]any{"sql": "SELECT 1 AS one"}); isErr || !strings.Contains(text, `"rows":[[1]]`) {
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
	if text, isErr := call(t, c, "run_select", map[string]any{"sql": "SELECT 2 AS two"}); isErr || !strings.Contains(text, `"rows":[[2]]`) {
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
	if text, isErr := call(t, c, "run_select", map[string]any{"sql": "SELECT 3 AS three"}); isErr || !strings.Contains(text, `"rows":[[3]]`) {
		t.Fatalf("after an unseen restart: %q (isError %v)", text, isErr)
	}
}
