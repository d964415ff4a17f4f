//go:build linux

// Enlarging a pipe's buffer with fcntl(F_SETPIPE_SZ).

package pipe

import (
	"fmt"
	"math"
	"os"
	"syscall"
)

// fSetPipeSize and fGetPipeSize are F_SETPIPE_SZ and F_GETPIPE_SZ, the
// same on every Linux architecture (the syscall package does not name
// them).
const (
	fSetPipeSize = 1031
	fGetPipeSize = 1032
)

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
		// F_SETPIPE_SZ sets the size outright: a buffer already as large
		// (the reader may have grown it) is left as it is, never shrunk,
		// and a full pipe never meets EBUSY for a smaller size.
		cur, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, fGetPipeSize, 0)
		if e == 0 && int(cur) >= size {
			return
		}
		_, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, uintptr(size))
	}); err != nil {
		return err
	}
	if errno != 0 {
		return os.NewSyscallError("fcntl F_SETPIPE_SZ", errno)
	}
	return nil
}
