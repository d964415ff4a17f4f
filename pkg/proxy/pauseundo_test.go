package proxy_test

import (
	"testing"
	"time"

	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// An undone pause puts back only what it changed: a pool paused by name
// before, or one resumed out of an earlier pause of every pool, keeps its
// state (a console PAUSE cancelled while it waits).
func TestPauseUndoKeepsOtherPauses(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 2, timeout: 10 * time.Second})
	const poolA, poolB = "postgres/postgres", "template1/postgres"
	connect(t, r.url("postgres"))
	connect(t, r.url("template1"))
	paused := func() map[string]bool {
		m := map[string]bool{}
		for _, ps := range r.Pools() {
			m[ps.Database+"/"+ps.User] = ps.Paused
		}
		return m
	}
	check := func(step string, a, b bool) {
		t.Helper()
		if p := paused(); p[poolA] != a || p[poolB] != b {
			t.Errorf("%s: paused %v, want %s=%v %s=%v", step, p, poolA, a, poolB, b)
		}
	}

	// A pool paused by name survives an undone pause of every pool.
	if err := r.PausePool(poolB); err != nil {
		t.Fatal(err)
	}
	undo, err := r.PauseUndoable()
	if err != nil {
		t.Fatal(err)
	}
	check("both paused", true, true)
	undo()
	check("pause of every pool undone", false, true)
	if !paused()[poolB] || r.Paused() {
		t.Errorf("Paused() %v after the undo", r.Paused())
	}

	// Under a pause of every pool, an undone pause by name leaves the
	// pool paused, and one resumed out of it resumed.
	r.Resume()
	if err := r.Pause(); err != nil {
		t.Fatal(err)
	}
	undo, err = r.PausePoolUndoable(poolA)
	if err != nil {
		t.Fatal(err)
	}
	undo()
	check("pause by name undone under a pause of every pool", true, true)
	if err := r.ResumePool(poolB); err != nil {
		t.Fatal(err)
	}
	undo, err = r.PausePoolUndoable(poolB)
	if err != nil {
		t.Fatal(err)
	}
	check("resumed pool paused again", true, true)
	undo()
	check("its pause undone", true, false)

	// A second pause of every pool, undone, keeps the first one and the
	// pools resumed out of it.
	undo, err = r.PauseUndoable()
	if err != nil {
		t.Fatal(err)
	}
	check("paused again", true, true)
	undo()
	check("second pause undone", true, false)
	r.Resume()
	check("resumed", false, false)
}
