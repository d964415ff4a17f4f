//go:build linux

// Enlarging the stdout pipe on Linux.

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// growPipe asks for a 1 MiB pipe buffer when stdout is a pipe: with the
// default 64 KiB, writing a 1.5 MB block wakes the reader (psql) two dozen
// times and costs a measurable share of a streaming load's CPU. Failure is
// harmless and ignored.
func growPipe(f *os.File) {
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, 1<<20)
}
