package console_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// rvPauseCancelled runs PAUSE on con, waits until admin sees the proxy
// paused and PAUSE waiting, then cancels it as psql's ^C does, and
// requires PAUSE to end with 57014 within 5 s.
func rvPauseCancelled(t *testing.T, ctx context.Context, con, admin *pgconn.PgConn) {
	t.Helper()
	paused := make(chan error, 1)
	go func() {
		_, err := con.Exec(ctx, "PAUSE").ReadAll()
		paused <- err
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
}
