// Watchdog: a statement the server does not stop at its statement_timeout is canceled from here.

package pgexec

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// watchdog cancels the statement running on pc when it outlives its
// statement_timeout by watchdogSlack (a built-in that never looks for a
// cancel: docs/safesql.md, "Cost"), as a canceled context would. It lives
// in a callState and is reused call after call: its timer allocates
// nothing per call.
type watchdog struct {
	mu    sync.Mutex
	t     *time.Timer
	pc    *pgconn.PgConn // the call's connection while armed; nil otherwise
	due   time.Time      // when the armed watch ends
	fired bool
}

// arm starts the watch of pc's statement for d.
func (w *watchdog) arm(pc *pgconn.PgConn, d time.Duration) {
	w.mu.Lock()
	w.pc, w.fired, w.due = pc, false, time.Now().Add(d)
	w.mu.Unlock()
	if w.t == nil {
		w.t = time.AfterFunc(d, w.fire)
	} else {
		w.t.Reset(d)
	}
}

// disarm ends the watch and reports whether it fired; after it returns,
// fire touches pc no more.
func (w *watchdog) disarm() bool {
	w.t.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pc = nil
	return w.fired
}

func (w *watchdog) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pc == nil || time.Now().Before(w.due) {
		// Disarmed meanwhile, or a late run of an earlier call's timer
		// that found this call's watch armed: not this call's time.
		return
	}
	w.fired = true
	cctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
	_ = w.pc.CancelRequest(cctx)
	cancel()
	_ = w.pc.Conn().SetDeadline(time.Now().Add(cancelGrace))
}
