//go:build !linux

// Elsewhere TCP_DEFER_ACCEPT does not exist: the listener is left as it is.

package proxyserver

import "syscall"

func deferAccept(_, _ string, _ syscall.RawConn) error { return nil }
