// Thread CPU time for benchmarks, so that a loaded machine does not inflate ns/op alone.

//go:build linux

package digest

import (
	"syscall"
	"time"
)

const haveThreadCPU = true

// threadCPU returns the CPU time the calling OS thread has used.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
