// The credentials of a Unix-socket client's process (Linux SO_PEERCRED).

package proxyserver

import (
	"net"
	"syscall"
)

// peerUID is the user id of the process at the other end of c, false when
// the system does not say.
func peerUID(c *net.UnixConn) (int, bool) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, false
	}
	var cred *syscall.Ucred
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		cred, gerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil || gerr != nil {
		return 0, false
	}
	return int(cred.Uid), true
}
