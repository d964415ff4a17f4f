//go:build !linux

// Elsewhere a Unix-socket client's credentials are not read: peer
// authentication fails.

package proxyserver

import "net"

func peerUID(*net.UnixConn) (int, bool) { return 0, false }
