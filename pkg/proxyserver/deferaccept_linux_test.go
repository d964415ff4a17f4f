package proxyserver

import (
	"context"
	"net"
	"syscall"
	"testing"
)

// The listening socket gets TCP_DEFER_ACCEPT (the kernel reports it in
// retransmission periods, so any positive value will do).
func TestDeferAccept(t *testing.T) {
	lc := net.ListenConfig{Control: deferAccept}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	rc, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	rc.Control(func(fd uintptr) {
		v, gerr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_DEFER_ACCEPT)
	})
	if gerr != nil || v <= 0 {
		t.Errorf("TCP_DEFER_ACCEPT = %d (%v), want it set", v, gerr)
	}
}
