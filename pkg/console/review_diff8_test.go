package console_test

// Review of 4db8d0a (console cancel, auth_type any, fake params...).
// Helpers rvServe, rvConsole, rvTry, rvShow, rvFind, rvConnect are
// review_console_test.go's.

import (
	"context"
	"testing"
)

// docs/qprouter.md "Cancel": a cancel request "ends that client's waiting
// PAUSE, which first resumes what it paused". PgBouncer 1.18's
// admin_handle_cancel -> full_resume only clears cf_pause_mode: a database
// paused by an earlier `PAUSE db` (db->db_paused) stays paused. qprouter's
// cancelled global PAUSE calls Resume(""), which also clears every
// per-database pause (pausedBy), so a database the admin had paused
// before, on purpose (for a restart of that database, say), is resumed
// by ^C on an unrelated PAUSE.
func TestDiff8ReviewCancelledPauseResumesEarlierPauseDB(t *testing.T) {
	addr, _ := rvServe(t, "transaction", nil)
	ctx := context.Background()
	t1 := rvConnect(t, addr, "template1", "zzd8-t1")
	if _, err := t1.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	admin := rvConsole(t, addr, "admin")
	if _, err := rvTry(admin, "PAUSE template1"); err != nil {
		t.Fatalf("PAUSE template1: %v", err)
	}
	if d := rvFind(rvShow(t, admin, "SHOW DATABASES"), "name", "template1"); d == nil || d["paused"] != "1" {
		t.Fatalf("template1 not paused after PAUSE template1: %v", d)
	}
	a := rvConnect(t, addr, "postgres", "zzd8-tx")
	tx, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	con := rvConsole(t, addr, "admin")
	defer func() {
		rvTry(admin, "RESUME")
		tx.Rollback(ctx)
	}()
	rvPauseCancelled(t, ctx, con, admin)
	if d := rvFind(rvShow(t, admin, "SHOW DATABASES"), "name", "template1"); d == nil || d["paused"] != "1" {
		t.Errorf("after ^C of a global PAUSE, template1 (paused before by PAUSE template1) has paused=%v; "+
			"the cancel should resume only what that PAUSE paused (PgBouncer's full_resume keeps db_paused)", d["paused"])
	}
}
