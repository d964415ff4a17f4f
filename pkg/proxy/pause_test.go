package proxy_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// Pausing one pool: its transaction under way finishes, its next one
// waits, another pool keeps working; then every pool but one.
func TestPausePool(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 2, timeout: 10 * time.Second})
	ctx := context.Background()
	const poolA, poolB = "postgres/postgres", "template1/postgres"
	a, b := connect(t, r.url("postgres")), connect(t, r.url("template1"))
	busy := connect(t, r.url("postgres"))
	tx, err := busy.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	if err := r.PausePool(poolA); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "select 2"); err != nil {
		t.Fatalf("transaction under way cut by pause: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit while paused: %v", err)
	}
	paused := func() map[string]bool {
		m := map[string]bool{}
		for _, ps := range r.Pools() {
			m[ps.Database+"/"+ps.User] = ps.Paused
		}
		return m
	}
	if p := paused(); !p[poolA] || p[poolB] {
		t.Errorf("paused flags: %v", p)
	}
	done := blockedQuery(t, a)
	if _, err := b.Exec(ctx, "select 1"); err != nil {
		t.Fatalf("other pool while one is paused: %v", err)
	}
	if err := r.ResumePool(poolA); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("after resume: %v", err)
	}

	// Every pool paused, then one resumed by name.
	r.Pause()
	if err := r.ResumePool(poolB); err != nil {
		t.Fatal(err)
	}
	done = blockedQuery(t, a)
	if _, err := b.Exec(ctx, "select 1"); err != nil {
		t.Fatalf("pool resumed by name: %v", err)
	}
	if p := paused(); !p[poolA] || p[poolB] || !r.Paused() {
		t.Errorf("paused flags: %v, all %v", p, r.Paused())
	}
	r.Resume()
	if err := <-done; err != nil {
		t.Fatalf("after resume: %v", err)
	}
	if p := paused(); p[poolA] || p[poolB] {
		t.Errorf("paused after Resume: %v", p)
	}

	for _, f := range []func(string) error{r.PausePool, r.ResumePool} {
		if err := f("nope/postgres"); !errors.Is(err, proxy.ErrUnknownPool) {
			t.Errorf("unknown pool: %v", err)
		}
	}
}

// blockedQuery runs a query on conn and checks that it has not finished
// after 200 ms; the channel gets its result.
func blockedQuery(t *testing.T, conn *pgx.Conn) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := conn.Exec(context.Background(), "select 1")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("query ran while its pool was paused: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	return done
}
