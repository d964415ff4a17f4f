// Review of 1647fbf (route: each host of a multi-host URL gets a share of
// the acquire timeout): each test asserts the correct behaviour and fails
// on the code it was written against.

package route

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// rvd9SlowHost is a TCP address in front of the cluster that answers every
// connection, only late: it waits delay before it connects the client to
// the server (a server on a slow link, a host under load).
func rvd9SlowHost(t *testing.T, serverPort int, delay time.Duration) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	keep := func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			keep(c)
			go func() {
				time.Sleep(delay)
				s, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", serverPort))
				if err != nil {
					c.Close()
					return
				}
				keep(s)
				go func() { io.Copy(s, c); s.Close() }()
				io.Copy(c, s)
				c.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().(*net.TCPAddr).Port
}

// docs/qprouter.md: without connect_timeout "each host, and each TLS or
// plain try of it, gets an equal share of the acquire timeout".
// bindAttempts divides the time by 1+len(Fallbacks) (two hosts under the
// default sslmode=prefer: 4 tries, a quarter each) and sets it as
// pgconn's ConnectTimeout, but pgconn (connectPreferred) starts one
// timer per host address, shared by that host's TLS and plain tries: each
// host gets a quarter of the acquire timeout instead of a half, and half
// of it is never used. Two live hosts that each need 35% of the acquire
// timeout to answer (1.4 s of 4 s) both fail, after 2 s, with 2 s left;
// before 1647fbf the first one served.
func TestDiff9ReviewSlowHostsGetAQuarterUnderSSLModePrefer(t *testing.T) {
	c := rvCluster(t)
	const acquire = 4 * time.Second
	a := rvd9SlowHost(t, c.Port, 700*time.Millisecond) // TLS try and plain try: 1.4 s
	b := rvd9SlowHost(t, c.Port, 700*time.Millisecond)
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres", a, b) // sslmode=prefer, libpq's default
	tg, err := NewTargets("", map[string]string{"app": url})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), acquire)
	defer cancel()
	start := time.Now()
	pc, err := tg.Connector(nil)(ctx, "app", "postgres")
	if err != nil {
		t.Fatalf("connect through %s failed after %s with %s of the %s acquire timeout left: %v; want the first host, "+
			"which answers within its half of it, to serve", url, time.Since(start).Round(10*time.Millisecond),
			time.Until(start.Add(acquire)).Round(10*time.Millisecond), acquire, err)
	}
	pc.Close(context.Background())
}
