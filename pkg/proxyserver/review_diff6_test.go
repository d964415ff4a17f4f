package proxyserver

import (
	"strings"
	"testing"
)

// ReadPools now decodes a re-encoded copy of the [pools] tables
// (fractionalSeconds), so a decoding error names a line of that copy, not
// of the file: here line 5 for a mistake on the file's line 9 (before
// the change the decoder named line 9). A user is sent to the wrong line.
func TestDiff6ReviewPoolsErrorNamesTheFileLine(t *testing.T) {
	src := "pool_size = 5\n\n# per-pool settings\n\n[pools.app]\npool_size = 3\n\n[pools.\"db/bob\"]\nmin_idle = \"x\"\n"
	_, err := ReadPools(strings.NewReader(src))
	if err == nil {
		t.Fatal("min_idle = \"x\" accepted")
	}
	if !strings.Contains(err.Error(), "line 9") {
		t.Errorf("the error does not name the file's line 9 (min_idle = \"x\"): %v", err)
	}
}
