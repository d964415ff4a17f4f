// Review: qprouter against hostile or broken clients.

package proxyserver

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// hsServe starts qprouter in front of the shared cluster (trust), in
// transaction mode, with the event loop when loop is set.
func hsServe(t *testing.T, loop bool, edit func(*Config)) (*Server, string, *pgtest.Cluster) {
	t.Helper()
	cl := pgtest.Shared(t)
	c := hsConfig(cl, loop)
	if edit != nil {
		edit(&c)
	}
	s, addr := serveForTest(t, Options{Config: c})
	return s, addr, cl
}

// hsConfig is hsServe's configuration for a proxy in front of cl:
// transaction mode, pool 2, short timeouts, the event loop when loop is
// set.
func hsConfig(cl *pgtest.Cluster, loop bool) Config {
	c := clusterConfig(cl, "transaction")
	c.AcquireTimeout = 10 * time.Second
	c.HealthCheckAfter = 30 * time.Second
	c.ShutdownTimeout = 2 * time.Second
	c.LoginTimeout = 2 * time.Second
	c.EventLoop = loop
	return c
}

// hsModes runs f once on goroutines and once with the event loop.
func hsModes(t *testing.T, f func(t *testing.T, loop bool)) {
	for _, loop := range []bool{false, true} {
		name := "goroutines"
		if loop {
			name = "eventloop"
		}
		t.Run(name, func(t *testing.T) { f(t, loop) })
	}
}

// hsDial connects a raw TCP client.
func hsDial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// hsStartup is a StartupMessage for user postgres, database postgres.
func hsStartup(params ...string) []byte {
	if len(params) == 0 {
		params = []string{"user", "postgres", "database", "postgres"}
	}
	b := []byte{0, 0, 0, 0, 0, 3, 0, 0}
	for _, p := range params {
		b = append(b, p...)
		b = append(b, 0)
	}
	b = append(b, 0)
	binary.BigEndian.PutUint32(b, uint32(len(b)))
	return b
}

// hsClosedWithin reports whether the server closes c within d (reading
// and discarding what it sends).
func hsClosedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	return err == nil // EOF: closed; a timeout is an error
}

// hsLogin logs a raw client in (trust) and reads up to ReadyForQuery.
func hsLogin(t *testing.T, addr string) net.Conn {
	t.Helper()
	c := hsDial(t, addr)
	if _, err := c.Write(hsStartup()); err != nil {
		t.Fatal(err)
	}
	hsReadUntil(t, c, 'Z')
	return c
}

// hsReadUntil reads backend messages until one of type want, returning
// the types seen.
func hsReadUntil(t *testing.T, c net.Conn, want byte) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	var seen []byte
	var hdr [5]byte
	for {
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			t.Fatalf("reading for %q after %q: %v", want, seen, err)
		}
		seen = append(seen, hdr[0])
		n := int(binary.BigEndian.Uint32(hdr[1:])) - 4
		if _, err := io.CopyN(io.Discard, c, int64(n)); err != nil {
			t.Fatal(err)
		}
		if hdr[0] == want {
			return seen
		}
	}
}

func hsMsg(typ byte, body []byte) []byte {
	b := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(4+len(body)))
	return append(b, body...)
}

func hsQuery(sql string) []byte { return hsMsg('Q', append([]byte(sql), 0)) }

func hsHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// The admin console reads its clients with pgproto3.Backend
// (console/console.go Serve, SetMaxBodyLen(pgwire.LargeMessage)), whose
// chunk reader allocates a message's whole declared body as soon as it
// reads the header. An admin or stats user (any user under auth_type any)
// sending one 8-byte header 'Q' 0x3ffffffe makes the process allocate
// 1 GiB; four such clients, 4 GiB. The sessions' pgwire.Framer grows
// "only as the bytes arrive" (docs/qprouter.md, pgwire), and PgBouncer's
// admin console takes small packets only.
func TestHostileReviewConsoleHugeLength(t *testing.T) {
	_, addr, _ := hsServe(t, false, func(c *Config) {
		c.AdminUsers = []string{"admin"}
		c.ConsoleDatabase = "pgbouncer"
	})
	h0 := hsHeap()
	c := hsDial(t, addr)
	c.Write(hsStartup("user", "admin", "database", "pgbouncer"))
	hsReadUntil(t, c, 'Z')
	// A Query header announcing a body just under the 1 GB bound, and
	// three bytes of it.
	c.Write([]byte{'Q', 0x3f, 0xff, 0xff, 0xfe, 's', 'e', 'l'})
	time.Sleep(500 * time.Millisecond)
	h1 := hsHeap()
	c.Close()
	if grown := int64(h1) - int64(h0); grown > 64<<20 {
		t.Errorf("an admin console client sent an 8-byte Query header announcing ~1 GiB and 3 bytes of body: "+
			"the proxy's heap grew by %d MiB (memory must grow only as the bytes arrive, as the Framer the sessions use does; "+
			"a few such clients exhaust the process's memory)", grown>>20)
	}
}

func TestHostileReviewLoginTimeoutRestartsOnLoop(t *testing.T) {
	hsModes(t, func(t *testing.T, loop bool) {
		auth := t.TempDir() + "/users.txt"
		if err := os.WriteFile(auth, []byte("\"postgres\" \"pw\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, addr, _ := hsServe(t, loop, func(c *Config) { c.AuthFile = auth; c.AuthType = "plain" }) // login timeout 2 s
		start := time.Now()
		c := hsDial(t, addr)
		pkt := hsStartup()
		for i := range pkt { // the startup packet over 1.8 s, then no password
			c.Write(pkt[i : i+1])
			time.Sleep(1800 * time.Millisecond / time.Duration(len(pkt)))
		}
		hsClosedWithin(c, 6*time.Second)
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("client_login_timeout 2s: a client that sent its startup packet slowly and then no password was closed %v after connecting, want about 2s", d.Round(10*time.Millisecond))
		}
	})
}

// docs/qprouter.md, --shutdown-timeout: "drain time on SIGTERM: idle
// clients are closed at once, clients in a transaction finish it; when the
// time is up the rest are cut". A connection still in its startup (it
// sent 5 bytes of its StartupMessage) is neither closed at once nor cut:
// Shutdown (proxy/proxy.go) waits on p.wg, which counts it, and only
// sessions are drained or aborted, while serveSocket runs pgwire.Accept
// under context.Background(). Serve returns only when the login timeout
// ends it (with client_login_timeout = 0 in a pgbouncer.ini, 100 years:
// one silent TCP connection blocks a SIGTERM forever). qpanalytics fixed
// the same thing (docs/qpanalytics-server.md, "Operating").
func TestHostileReviewShutdownHeldByStartup(t *testing.T) {
	hsModes(t, func(t *testing.T, loop bool) {
		cl := pgtest.Shared(t)
		c := valid()
		c.ServerURL = fmt.Sprintf("postgres://127.0.0.1:%d/postgres?sslmode=disable", cl.Port)
		c.PoolMode = "transaction"
		c.EventLoop = loop
		c.LoginTimeout = 30 * time.Second
		c.ShutdownTimeout = time.Second
		c.IdleTimeout, c.MaxLifetime = time.Minute, time.Hour
		ready := make(chan string, 1)
		s, err := New(Options{Config: c, Ready: func(a string) { ready <- a }})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- s.Serve(ctx) }()
		var addr string
		select {
		case addr = <-ready:
		case err := <-done:
			t.Fatal(err)
		}
		half := hsDial(t, addr)
		half.Write(hsStartup()[:5])
		time.Sleep(200 * time.Millisecond)
		start := time.Now()
		cancel()
		select {
		case <-done:
		case <-time.After(c.ShutdownTimeout + 3*time.Second):
			t.Errorf("shutdown_timeout 1s: Serve still draining %v after its context ended, held by a connection that sent 5 bytes of its startup packet (it would wait the 30s login timeout)", time.Since(start).Round(100*time.Millisecond))
			half.Close()
			<-done
		}
	})
}

// --query-timeout (docs/qprouter.md): "a client whose query has run on a
// server for this long since the client's last message ... is sent FATAL
// 57014 ... and closed; its server connection is closed and discarded and
// a cancel request stops the query on the server" (PgBouncer's
// query_timeout disconnects both). A client that sends a query with a big
// result and never reads it is never ended: session.timeOut
// (proxy/idle.go) closes only the server socket, while the session's
// goroutine (or the event loop's relay) is stuck writing to the client,
// which has no deadline; session.end waits for it, so the server
// connection is never discarded and its pool slot stays taken. With a
// pool of one, every other client of the pool then waits for ever (here:
// a login 1.5 s after the timeout fired still gets no server in 4 s).
func TestHostileReviewQueryTimeoutStalledReader(t *testing.T) {
	hsModes(t, func(t *testing.T, loop bool) {
		_, addr, _ := hsServe(t, loop, func(c *Config) {
			c.PoolSize = 1
			c.QueryTimeout = time.Second
		})
		st := hsLogin(t, addr)
		st.Write(hsQuery("select repeat('x', 1000) from generate_series(1, 300000)")) // 300 MB, never read
		time.Sleep(2500 * time.Millisecond)                                           // query_timeout 1s, checked every 250 ms
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
		defer cancel()
		cn, err := pgx.Connect(ctx, "postgres://postgres@"+addr+"/postgres?sslmode=disable")
		if err == nil {
			defer cn.Close(context.Background())
			var v int
			err = cn.QueryRow(ctx, "select 1").Scan(&v)
		}
		if err != nil {
			t.Errorf("query_timeout 1s, pool_size 1: 2.5 s after a client stopped reading its 300 MB answer, another client still gets no server within 4 s: %v", err)
		}
	})
}
