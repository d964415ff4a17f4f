package pgexec

import (
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestLateStopCancel checks which failed ROLLBACKs are put down to the
// second signal of our own acknowledged stop: only a cancellation, only
// after a stop, and only when the stop's signals were all sent.
func TestLateStopCancel(t *testing.T) {
	canceled := &pgconn.PgError{Code: codeQueryCanceled}
	for _, c := range []struct {
		name string
		x    exchange
		want bool
	}{
		{"acknowledged stop, canceled ROLLBACK", exchange{stopSent: true, stopAcked: true, rbErr: canceled}, true},
		{"no stop", exchange{rbErr: canceled}, false},
		{"stop not acknowledged", exchange{stopSent: true, rbErr: canceled}, false},
		{"another error", exchange{stopSent: true, stopAcked: true, rbErr: &pgconn.PgError{Code: "25P02"}}, false},
		{"ROLLBACK fine", exchange{stopSent: true, stopAcked: true}, false},
	} {
		if got := lateStopCancel(&c.x); got != c.want {
			t.Errorf("%s: lateStopCancel = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRollbackAgain checks that a connection left in a failed
// transaction, as a canceled ROLLBACK leaves it, comes back idle, and
// that a connection that cannot be rolled back is reported unusable.
func TestRollbackAgain(t *testing.T) {
	pool := newPool(t, 1, true)
	ctx := testCtx(t)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	pc := conn.Conn().PgConn()
	if _, err := pc.Exec(ctx, "BEGIN; SELECT 1/0").ReadAll(); err == nil {
		t.Fatal("SELECT 1/0 did not fail")
	}
	if s := pc.TxStatus(); s != 'E' {
		t.Fatalf("transaction status %q before, want E", s)
	}
	if !rollbackAgain(pc) {
		t.Fatal("rollbackAgain reported a failed transaction as not recovered")
	}
	if s := pc.TxStatus(); s != 'I' {
		t.Fatalf("transaction status %q after, want I", s)
	}
	if err := pc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if rollbackAgain(pc) {
		t.Error("rollbackAgain reported a closed connection as clean")
	}
}
