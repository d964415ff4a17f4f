package route_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pool"
	"github.com/qpkit/qpkit/pkg/route"
)

// Sweep removes a pool once it has been unused (no client, no waiter, no
// server connection) for UnusedTimeout, keeps one a client has joined,
// and removes at once one a reload no longer routes to; a client that
// joins a removed pool is told to route again (pool.ErrClosed).
func TestSweep(t *testing.T) {
	tg, err := route.NewTargets("postgres://db1/", map[string]string{"app": "postgres://app@db2/"})
	if err != nil {
		t.Fatal(err)
	}
	s := &route.Pools{
		Connect:       func(context.Context, string, string) (*pgconn.PgConn, error) { return nil, errors.New("no server") },
		Config:        func(db, user string) pool.Config { return pool.Config{Size: 1} },
		Targets:       tg,
		UnusedTimeout: time.Minute,
	}
	defer s.Close()
	route1 := func(db, user string) *pool.Pool {
		t.Helper()
		p, err := s.Route(context.Background(), route.Request{Database: db, User: user})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	made := route1("made_up", "bob")
	used := route1("other", "bob")
	if err := used.Join(); err != nil {
		t.Fatal(err)
	}
	app := route1("app", "bob")
	if app.User != "app" {
		t.Fatalf("forced user: %s", app.User)
	}
	t0 := time.Now()
	if got := s.Sweep(t0); len(got) != 0 {
		t.Fatalf("removed at first sight: %v", got)
	}
	if got := s.Sweep(t0.Add(59 * time.Second)); len(got) != 0 {
		t.Fatalf("removed before UnusedTimeout: %v", got)
	}
	got := s.Sweep(t0.Add(61 * time.Second))
	if len(got) != 2 || got[0] == "other/bob" || got[1] == "other/bob" {
		t.Fatalf("removed after UnusedTimeout: %v, want made_up/bob and app/app", got)
	}
	if err := made.Join(); !errors.Is(err, pool.ErrClosed) {
		t.Errorf("Join of a removed pool: %v", err)
	}
	if again := route1("made_up", "bob"); again == made || again.Join() != nil {
		t.Error("routing again gives the removed pool, or one that cannot be joined")
	}
	if len(s.All()) != 2 {
		t.Errorf("pools left: %d, want other/bob and the new made_up/bob", len(s.All()))
	}

	// A reload that changes app's forced user leaves app/app behind: it goes
	// at the next sweep, unused or not so long.
	app = route1("app", "bob")
	if _, err := tg.Update("postgres://db1/", map[string]string{"app": "postgres://app2@db2/"}); err != nil {
		t.Fatal(err)
	}
	if got := s.Sweep(t0.Add(62 * time.Second)); len(got) != 1 || got[0] != "app/app" {
		t.Errorf("after the forced user changed: removed %v, want app/app", got)
	}
	// A client still on the left-behind pool keeps it until it leaves.
	app2 := route1("app", "bob")
	if err := app2.Join(); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.Update("postgres://db1/", map[string]string{"app": "postgres://app3@db2/"}); err != nil {
		t.Fatal(err)
	}
	if got := s.Sweep(t0.Add(63 * time.Second)); len(got) != 0 {
		t.Errorf("a pool with a client removed: %v", got)
	}
	app2.Leave()
	if got := s.Sweep(t0.Add(64 * time.Second)); len(got) != 1 || got[0] != "app/app2" {
		t.Errorf("once its client left: removed %v, want app/app2", got)
	}

	// A paused pool stays, so that its RESUME finds it.
	paused := route1("paused", "bob")
	paused.SetHold(func() bool { return true })
	s.Sweep(t0.Add(65 * time.Second))
	if got := s.Sweep(t0.Add(200 * time.Second)); len(got) != 0 {
		t.Errorf("a paused pool removed: %v", got)
	}
}
