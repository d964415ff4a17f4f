// Review of the changes of 2026-12-05 (ad247fe..HEAD) in pgwire.

package pgwire

import (
	"math"
	"testing"
)

// NewCancelKey's counter is a uint32 taken modulo 2^31-2^22, which does
// not divide 2^32: when the counter wraps (from a random start, so in any
// process that happens to cross it) the PIDs jump back by 2^23, and a PID
// is given again 8,388,608 keys after it was first given, not "about two
// billion keys later" as cancel.go promises; a long-lived client then
// shares its PID with a new one (the console's client ids and
// qpanalytics' session table rely on them being distinct).
func TestTodayReviewCancelKeyPIDsAcrossCounterWrap(t *testing.T) {
	saved := syntheticPIDs.Load()
	defer syntheticPIDs.Store(saved)
	syntheticPIDs.Store(math.MaxUint32 - 1) // a start the random one can be
	first := NewCancelKey().PID
	for i := 1; i <= 1<<23; i++ {
		if pid := NewCancelKey().PID; pid == first {
			t.Fatalf("PID %d given again %d keys later", pid, i)
		}
	}
}
