package route

import (
	"net"
	"sync"
	"testing"
)

// silentHost is a TCP address that accepts connections and never answers
// (a server stopped with SIGSTOP, a host behind a firewall that drops
// after the handshake, a half-dead VM): the "host that does not answer"
// of docs/qprouter.md.
func silentHost(t *testing.T) *net.TCPAddr {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().(*net.TCPAddr)
}
