// Review of f4b4242 (regressions and gaps of its diff).

package proxyserver

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

// rv2Serve starts qprouter on goroutines (no event loop), session mode,
// one server, debug log to w, in front of the shared cluster.
func rv2Serve(t *testing.T, w io.Writer, edit func(*Config)) string {
	t.Helper()
	c := hsConfig(pgtest.Shared(t), false)
	c.PoolMode = "session"
	c.PoolSize = 1
	c.LogLevel = "debug" // timeOut logs "closing a client ... timeout=query_timeout"
	if edit != nil {
		edit(&c)
	}
	_, addr := serveForTest(t, Options{Config: c, Logs: w})
	return addr
}

// rv2TimedOutStream sends a 200 MB answer's query (rows of 1 MB) and does
// not read it until query_timeout fired; then, after send (when not nil)
// and a pause of pause (well within stalledClient, 1 s), it reads the
// stream to its end. It returns "" when the stream ends, in whole
// messages, with a FATAL 57014, and what went wrong otherwise.
func rv2TimedOutStream(t *testing.T, addr string, lw *rvLog, send []byte, pause time.Duration) string {
	c := hsLogin(t, addr)
	c.Write(hsQuery("select repeat('x', 1000000) from generate_series(1, 200)"))
	select {
	case <-lw.hit:
	case <-time.After(15 * time.Second):
		t.Fatal("query_timeout did not fire in 15 s")
	}
	if send != nil {
		c.Write(send)
	}
	time.Sleep(pause)
	return rv2ReadToEnd(c)
}

func rv2ReadToEnd(c net.Conn) string {
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	var hdr [5]byte
	rows := 0
	var last byte
	var lastBody []byte
	for {
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			if last != 'E' || !bytes.Contains(lastBody, []byte("57014")) {
				return fmt.Sprintf("the stream ended (%v) after %d rows without a FATAL 57014 (last message %q %q)", err, rows, last, rv2Short(lastBody))
			}
			return ""
		}
		n := int(binary.BigEndian.Uint32(hdr[1:])) - 4
		body := make([]byte, n)
		if k, err := io.ReadFull(c, body); err != nil {
			return fmt.Sprintf("the stream is cut in the middle of a %q message of %d bytes after %d of them (%v), after %d whole rows; the bytes there end in %q",
				hdr[0], n, k, err, rows, rv2Tail(body[:k]))
		}
		last, lastBody = hdr[0], body
		switch hdr[0] {
		case 'D':
			rows++
		case 'Z':
			if rows == 200 {
				return "the answer ended normally: query_timeout did not stop it"
			}
		}
	}
}

func rv2Short(b []byte) string {
	if len(b) > 120 {
		return string(b[:120])
	}
	return string(b)
}

func rv2Tail(b []byte) string {
	if len(b) > 110 {
		return string(b[len(b)-110:])
	}
	return string(b)
}

// Regression of f4b4242. docs/qprouter.md --query-timeout: "A client that
// reads, however slowly, still gets the rows already on their way, then
// the FATAL: on a goroutine the timeout stops the relay with past read
// and write deadlines on the server rather than a close ..., and the
// relay finishes a row it has begun to send". The new write deadline
// makes the client goroutine's next write to the server fail, and
// flushServer (proxy/session.go) then closes the server socket under the
// relay, which is in the middle of a row: the relay's next read fails
// with net.ErrClosed (not the deadline finishAfterTimeout waits for) and
// serverFailed writes the FATAL inside the DataRow. A client that sends
// anything after the timeout (a pipelining client's next query, a Sync)
// and reads on gets a broken stream. At 7294a03 the write went through
// and the row was finished. query_timeout 4s: the janitor then checks
// once a second, so its own next pass (see the next test) comes after the
// row.
func TestDiff2ReviewQueryTimeoutClientSendsAfterTimeoutCutMidRow(t *testing.T) {
	lw := &rvLog{marker: "timeout=query_timeout", hit: make(chan struct{})}
	addr := rv2Serve(t, lw, func(c *Config) { c.QueryTimeout = 4 * time.Second })
	if bad := rv2TimedOutStream(t, addr, lw, hsQuery("select 1"), 100*time.Millisecond); bad != "" {
		t.Errorf("query_timeout, a client reading its answer that sent a query after the timeout (then read on within 0.1 s): %s", bad)
	}
}

// Gap of 7294a03's fix (kept by f4b4242). The same promise, for a client
// that sends nothing and only pauses reading for 0.3 s (less than the
// second stalledClient allows a write). The janitor passes again every
// quarter of the timeout (here 250 ms); timeOut finds s.killed set and
// calls wakeKilled (idle.go: "not seen yet"), which wakes the client
// goroutine with a past read deadline; it ends the session (end, not
// settled) with srv.Net.Close() while the relay is inside a row, and the
// FATAL lands in the middle of the DataRow again.
func TestDiff2ReviewQueryTimeoutPausingReaderCutMidRow(t *testing.T) {
	lw := &rvLog{marker: "timeout=query_timeout", hit: make(chan struct{})}
	addr := rv2Serve(t, lw, func(c *Config) { c.QueryTimeout = time.Second })
	if bad := rv2TimedOutStream(t, addr, lw, nil, 300*time.Millisecond); bad != "" {
		t.Errorf("query_timeout 1s, a client reading its answer after a pause of 0.3 s: %s", bad)
	}
}

// Regression of f4b4242. docs/qprouter.md (reload): what only a restart
// turns on or off (TLS, the CA file) keeps its value, and "one that drops
// TLS is applied with a warning as before". apply now puts the old
// tls_cert/tls_key (and tls_ca_file) back into the new settings and then
// reads those files again: an operator who turns TLS (or client
// certificates) off in the config file and removes the files it no longer
// names gets the whole reload refused ("open .../server.crt: no such file
// or directory", a file the new settings do not name), pool_size and every
// other change with it. Before f4b4242 the kept certificate (and CAs)
// stayed in memory, with the warning, and the rest of the reload applied.
func TestDiff2ReviewReloadDroppingTLSAfterFilesRemovedRefused(t *testing.T) {
	cl := pgtest.Shared(t)
	for _, drop := range []string{"tls", "tls_ca_file"} {
		t.Run(drop, func(t *testing.T) {
			c := valid()
			c.ServerURL = fmt.Sprintf("postgres://127.0.0.1:%d/postgres?sslmode=disable", cl.Port)
			dir := t.TempDir()
			c.TLSCert, c.TLSKey = rvAuthCert(t, dir)
			c.TLSCAFile = c.TLSCert // the self-signed certificate as the CA
			nc := c
			nc.PoolSize = 7
			if drop == "tls" {
				nc.TLSCert, nc.TLSKey, nc.TLSCAFile = "", "", ""
			} else {
				nc.TLSCAFile = ""
			}
			if err := nc.Check(); err != nil {
				t.Fatalf("the new settings are refused by themselves: %v", err)
			}
			s, _ := serveForTest(t, Options{Config: c, Load: func() (Config, error) { return nc, nil }})
			if drop == "tls" {
				os.Remove(c.TLSCert)
				os.Remove(c.TLSKey)
			} else {
				// the CA file is the certificate file: the certificate
				// moves to a new name, which the new settings give
				b, err := os.ReadFile(c.TLSCert)
				if err != nil {
					t.Fatal(err)
				}
				os.Remove(c.TLSCert)
				nc.TLSCert = filepath.Join(dir, "renewed.crt")
				if err := os.WriteFile(nc.TLSCert, b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Reload(); err != nil {
				t.Errorf("a reload turning %s off (kept until a restart, with a warning) after its files were removed was refused: %v", drop, err)
			}
			if got, _ := s.get(); got.PoolSize != 7 {
				t.Errorf("after the reload pool_size is %d, want 7", got.PoolSize)
			}
		})
	}
}
