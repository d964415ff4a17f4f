// Synthetic cancel keys: distinct PIDs, random secrets.

package pgwire

import "testing"

// TestCancelKeysDistinct: 100,000 keys in a row have distinct PIDs in the
// synthetic range (random PIDs would repeat with near certainty), and
// their secrets are not all the same.
func TestCancelKeysDistinct(t *testing.T) {
	const n = 100_000
	seen := make(map[uint32]bool, n)
	secrets := map[string]bool{}
	for range n {
		k := NewCancelKey()
		if k.PID < SyntheticPIDBase || k.PID > 1<<31-1 {
			t.Fatalf("PID %d out of range", k.PID)
		}
		if seen[k.PID] {
			t.Fatalf("PID %d given twice", k.PID)
		}
		seen[k.PID] = true
		if len(k.Secret) != 4 {
			t.Fatalf("secret %x", k.Secret)
		}
		secrets[string(k.Secret)] = true
	}
	if len(secrets) < n/2 {
		t.Fatalf("only %d distinct secrets in %d keys", len(secrets), n)
	}
}
