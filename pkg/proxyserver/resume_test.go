package proxyserver

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// After PAUSE closed a pool's servers (for a restart of the database),
// RESUME lets the pool open its --min-idle connections again without
// waiting for a client to need one.
func TestResumeRefillsMinIdle(t *testing.T) {
	_, addr, _ := rvServe(t, "transaction", func(c *Config) {
		c.PoolSize = 4
		c.MinIdle = 2
	})
	ctx := context.Background()
	cn, err := pgx.Connect(ctx, "postgres://postgres@"+addr+"/postgres?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cn.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	cn.Close(ctx)
	con := opsConsole(t, addr)
	servers := func() int { return len(opsShow(t, con, "SHOW SERVERS")) }
	waitFor := func(what string, want int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		n := servers()
		for n != want && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			n = servers()
		}
		if n != want {
			t.Fatalf("%s: %d server connections after 5 s, want %d", what, n, want)
		}
	}
	waitFor("min idle 2 with no client", 2)
	opsShow(t, con, "PAUSE")
	waitFor("after PAUSE", 0)
	time.Sleep(1500 * time.Millisecond) // a janitor round or more: a paused pool stays closed
	if n := servers(); n != 0 {
		t.Fatalf("paused: %d server connections, want 0", n)
	}
	opsShow(t, con, "RESUME")
	waitFor("after RESUME, no client", 2)
}
