package console_test

// Review of 2835b37 (a cancelled PAUSE undoes only its own pause).
// Helpers rvServe, rvConsole, rvTry, rvShow, rvFind, rvConnect are
// review_console_test.go's.

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/qpkit/qpkit/pkg/proxyserver"
)

// 2835b37 keeps a database paused by an earlier `PAUSE db` paused when an
// unrelated global PAUSE is cancelled, but the undo (proxy.PauseUndoable)
// still calls Reopen on every pool, so the janitor of the paused
// database's pool refills min_pool_size at its next round: qprouter
// connects again to a database the admin paused (and PAUSE disconnected)
// to restart it. PgBouncer's cancel (admin_handle_cancel -> full_resume)
// leaves db_paused databases alone, and a paused database's pool opens no
// server connection (janitor.c: no launch_new_connection while
// db->db_paused). Expected: no backend of template1 after the cancel.
func TestDiff9ReviewCancelledPauseReconnectsPausedDatabase(t *testing.T) {
	addr, cl := rvServe(t, "transaction", func(c *proxyserver.Config) { c.MinIdle = 1 })
	ctx := context.Background()
	direct, err := pgx.Connect(ctx, cl.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close(ctx)
	backends := func() int {
		var n int
		if err := direct.QueryRow(ctx, "select count(*) from pg_stat_activity where datname = 'template1' and backend_type = 'client backend'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	t1 := rvConnect(t, addr, "template1", "zzd9-t1")
	if _, err := t1.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	admin := rvConsole(t, addr, "admin")
	if _, err := rvTry(admin, "PAUSE template1"); err != nil {
		t.Fatalf("PAUSE template1: %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); backends() != 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("template1 still has %d backends after PAUSE template1", backends())
		}
	}
	time.Sleep(1500 * time.Millisecond) // a janitor round or more: nothing reconnects while paused
	if n := backends(); n != 0 {
		t.Fatalf("before the cancelled PAUSE: %d backends of paused template1", n)
	}

	a := rvConnect(t, addr, "postgres", "zzd9-tx")
	tx, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	con := rvConsole(t, addr, "admin")
	defer func() {
		tx.Rollback(ctx)
		rvTry(admin, "RESUME")
	}()
	rvPauseCancelled(t, ctx, con, admin)
	if d := rvFind(rvShow(t, admin, "SHOW DATABASES"), "name", "template1"); d == nil || d["paused"] != "1" {
		t.Fatalf("template1 not paused after the cancel: %v", d)
	}
	time.Sleep(2500 * time.Millisecond) // two janitor rounds
	if n := backends(); n != 0 {
		t.Errorf("template1, paused by PAUSE template1 and still paused (SHOW DATABASES paused=1), has %d server connection(s) "+
			"again after an unrelated PAUSE was cancelled; want none until RESUME", n)
	}
}
