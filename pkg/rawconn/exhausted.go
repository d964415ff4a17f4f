// Accept errors a server outlives: out of descriptors or memory.

package rawconn

import (
	"errors"
	"syscall"
	"time"
)

// ExhaustedRetry is how long an accept that ran out of descriptors or
// memory waits before it tries again.
const ExhaustedRetry = 10 * time.Millisecond

// Exhausted reports whether an accept failed for want of descriptors or
// memory: not fatal to a server, which tries again after ExhaustedRetry.
func Exhausted(err error) bool {
	var e syscall.Errno
	if !errors.As(err, &e) {
		return false
	}
	switch e {
	case syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM:
		return true
	}
	return false
}
