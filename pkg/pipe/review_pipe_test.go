//go:build linux

package pipe

import (
	"os"
	"testing"
)

// Grow promises a buffer of "at least size bytes"; it must never make a
// pipe's buffer smaller. F_SETPIPE_SZ sets the size outright, so Grow
// shrinks a larger buffer (1 MiB -> 64 KiB here), and on a pipe holding
// more than size bytes fails with EBUSY though the buffer is already big
// enough.
func TestRawReviewGrowNeverShrinks(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if err := Grow(w, 1<<20); err != nil {
		t.Fatal(err)
	}
	if err := Grow(w, 64<<10); err != nil {
		t.Fatalf("Grow to a size below the buffer's: %v", err)
	}
	if n := pipeSize(t, w); n < 1<<20 {
		t.Errorf("Grow(64 KiB) shrank the 1 MiB buffer to %d bytes", n)
	}

	// A default (64 KiB) pipe with 20 000 bytes queued: asking for 4 KiB
	// must succeed without change, not fail.
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	defer w2.Close()
	if _, err := w2.Write(make([]byte, 20000)); err != nil {
		t.Fatal(err)
	}
	before := pipeSize(t, w2)
	if err := Grow(w2, 4096); err != nil {
		t.Errorf("Grow(4096) on a %d-byte pipe holding 20000 bytes: %v", before, err)
	}
	if n := pipeSize(t, w2); n < before {
		t.Errorf("buffer %d bytes after Grow, was %d", n, before)
	}
}
