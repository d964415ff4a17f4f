package pgwire

import "testing"

// Synthetic PIDs stay out of Linux's process IDs (so a proxy can give
// some clients their server's real one) and positive as an int32.
func TestNewCancelKeyRange(t *testing.T) {
	seen := map[uint32]bool{}
	for range 10000 {
		k := NewCancelKey()
		if k.PID < SyntheticPIDBase || k.PID > 1<<31-1 {
			t.Fatalf("PID %d outside [%d, 2^31)", k.PID, SyntheticPIDBase)
		}
		if len(k.Secret) != 4 {
			t.Fatalf("secret of %d bytes", len(k.Secret))
		}
		seen[k.PID] = true
	}
	if len(seen) < 9990 {
		t.Fatalf("%d distinct PIDs in 10,000 keys", len(seen))
	}
}
