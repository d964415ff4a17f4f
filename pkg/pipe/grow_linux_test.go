//go:build linux

package pipe

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func pipeSize(t *testing.T, f *os.File) int {
	t.Helper()
	n, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), fGetPipeSize, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	return int(n)
}

func TestGrow(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if err := Grow(w, 1<<20); err != nil {
		t.Fatal(err)
	}
	if n := pipeSize(t, w); n < 1<<20 {
		t.Errorf("pipe buffer %d bytes after Grow, want at least 1 MiB", n)
	}
	// A size fcntl cannot express is refused, not truncated.
	if err := Grow(w, 1<<40); err == nil {
		t.Error("Grow to 1 TiB succeeded")
	}
}

func TestGrowNotAPipe(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "file"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Grow(f, 1<<20); err != nil {
		t.Errorf("Grow on a regular file: %v", err)
	}
}
