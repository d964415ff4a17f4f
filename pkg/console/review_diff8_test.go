package console_test

// Review of 4db8d0a (console cancel, auth_type any, fake params...).
// Helpers rvServe, rvConsole, rvTry, rvShow, rvFind, rvConnect are
// review_console_test.go's.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
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
	paused := make(chan error, 1)
	go func() {
		_, err := con.Exec(ctx, "PAUSE").ReadAll()
		paused <- err
	}()
	defer func() {
		rvTry(admin, "RESUME")
		tx.Rollback(ctx)
	}()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if st := rvFind(rvShow(t, admin, "SHOW STATE"), "key", "paused"); st != nil && st["value"] == "yes" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("PAUSE did not pause")
		}
	}
	time.Sleep(100 * time.Millisecond) // PAUSE is in its wait
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := con.CancelRequest(cctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-paused:
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "57014" {
			t.Fatalf("cancelled PAUSE ended with %v, want 57014", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("PAUSE still waits 5 s after its cancel")
	}
	if d := rvFind(rvShow(t, admin, "SHOW DATABASES"), "name", "template1"); d == nil || d["paused"] != "1" {
		t.Errorf("after ^C of a global PAUSE, template1 (paused before by PAUSE template1) has paused=%v; "+
			"the cancel should resume only what that PAUSE paused (PgBouncer's full_resume keeps db_paused)", d["paused"])
	}
}
