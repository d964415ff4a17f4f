//go:build !linux

// Elsewhere the connection is used as it is.

package rawconn

import "net"

// Wrap returns c: raw system calls are used on Linux only.
func Wrap(c net.Conn) net.Conn { return c }

// Listen returns ln: raw system calls are used on Linux only.
func Listen(ln net.Listener, keepAlive bool) net.Listener { return ln }
