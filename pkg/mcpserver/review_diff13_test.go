// Review of ff2efc2 (mcpg: runResilient runs a call again only when it
// failed at once on a dropped pooled connection).

package mcpserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// PostgreSQL 14+ closes a session idle longer than idle_session_timeout
// (a common setting on managed servers, set per role or database) with
// FATAL 57P05 "terminating connection due to idle-session timeout": a
// pooled connection dropped while idle, exactly the case runResilient
// exists for (docs/mcpg.md: "A call that fails on a pooled connection the
// server dropped ... is run once more on a fresh connection"). The
// goodbye is already waiting, so the call fails within 20 ms and is
// marked pgexec.ErrFailedAtOnce, but isUnavailable (unavailable.go:95)
// only counts 08xxx and 57P01..57P03, so the call is not run again and
// the agent gets the stale FATAL for a perfectly good query. pgxpool's
// own liveness ping runs only for connections idle more than 1 s.
func TestDiff13ReviewIdleSessionTimeoutNotRetried(t *testing.T) {
	db := pgtest.Shared(t)
	pcfg, err := pgxpool.ParseConfig(db.URL())
	if err != nil {
		t.Fatal(err)
	}
	pcfg.MaxConns = 1
	ConfigureLazyPool(pcfg)
	pcfg.ConnConfig.RuntimeParams["idle_session_timeout"] = "300ms"
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	srv, err := New(Config{Pool: pool})
	if err != nil {
		t.Fatal(err)
	}
	c := start(t, NewInProcessClient(srv))
	if text, isErr, err := tryCall(c, "run_select", map[string]any{"sql": "SELECT 1 AS one"}); err != nil || isErr {
		t.Fatalf("first call: %v %v %s", err, isErr, text)
	}
	time.Sleep(600 * time.Millisecond) // past idle_session_timeout, under pgxpool's 1 s ping
	text, isErr, err := tryCall(c, "run_select", map[string]any{"sql": "SELECT 2 AS two"})
	if err != nil {
		t.Fatal(err)
	}
	if isErr || !strings.Contains(text, "two") {
		t.Fatalf("call on a connection the server closed for idleness was not run again: %s", text)
	}
}
