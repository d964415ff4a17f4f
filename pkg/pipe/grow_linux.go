//go:build linux

// Enlarging a pipe's buffer with fcntl(F_SETPIPE_SZ).

package pipe

import (
	"fmt"
	"math"
	"os"
	"syscall"
)

// fSetPipeSize is F_SETPIPE_SZ, the same on every Linux architecture (the
// syscall package does not name it).
const fSetPipeSize = 1031

// Grow asks the kernel for a buffer of at least size bytes when f is a
// pipe, so a reader is woken once per large write instead of once per 64
// KiB (Linux's default). On any other file it does nothing. Unprivileged
// processes may ask for up to /proc/sys/fs/pipe-max-size (1 MiB by
// default); the error says when the kernel refused.
func Grow(f *os.File, size int) error {
	if size < 1 || size > math.MaxInt32 {
		return fmt.Errorf("pipe buffer size %d is out of range 1..%d", size, math.MaxInt32)
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return nil
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	if err := sc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, uintptr(size))
	}); err != nil {
		return err
	}
	if errno != 0 {
		return os.NewSyscallError("fcntl F_SETPIPE_SZ", errno)
	}
	return nil
}
