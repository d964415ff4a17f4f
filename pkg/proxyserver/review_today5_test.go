// Review of 1860451 (stopRelay): a query_timeout on a client that is
// reading its answer, only slower than the server writes it.

package proxyserver

import (
	"encoding/binary"
	"io"
	"testing"
	"time"
)

// A client that reads a long answer steadily, but slower than the server
// produces it, is over query_timeout while its answer streams. It must
// get the FATAL 57014 after the rows it read (docs/qprouter.md
// --query-timeout: "is sent FATAL 57014 ... and closed"; stopRelay's own
// comment: "a second, so that the FATAL still reaches a client that
// reads"). On the event loop, stopRelay
// (proxy/idle.go) posts failOnLoop as soon as the timeout fires: the
// relay is waiting for the client to drain (lc.Pending() > 0), and
// serverFailed appends the FATAL behind the queued rows and closes the
// client at once; netloop's Close drops what the socket cannot take, so
// the reading client sees its stream cut (EOF, mid-message or not)
// without the FATAL. On goroutines the timeout closed the server in
// the middle of a row the relay had begun to send, so the stream was cut
// there (fixed: the relay's server gets a past read deadline instead, and
// the relay finishes the row, then sends the FATAL).
func TestToday5ReviewQueryTimeoutReadingClientGetsFatal(t *testing.T) {
	hsModes(t, func(t *testing.T, loop bool) {
		_, addr, _ := hsServe(t, loop, func(c *Config) {
			c.PoolSize = 1
			c.QueryTimeout = time.Second
		})
		c := hsLogin(t, addr)
		c.Write(hsQuery("select repeat('x', 1000) from generate_series(1, 300000)")) // 300 MB
		c.SetReadDeadline(time.Now().Add(15 * time.Second))
		var hdr [5]byte
		var last byte
		var lastBody []byte
		rows := 0
		start := time.Now()
		for {
			if _, err := io.ReadFull(c, hdr[:]); err != nil {
				if last != 'E' {
					t.Errorf("query_timeout 1s, a client reading its answer at ~4 MB/s: the stream ended (%v) after %d rows, %v, and no FATAL 57014 (last message %q)", err, rows, time.Since(start).Round(10*time.Millisecond), last)
				}
				return
			}
			n := int(binary.BigEndian.Uint32(hdr[1:])) - 4
			body := make([]byte, n)
			if _, err := io.ReadFull(c, body); err != nil {
				t.Errorf("query_timeout 1s, a client reading its answer: cut in the middle of a %q message after %d rows: %v (no FATAL 57014)", hdr[0], rows, err)
				return
			}
			last, lastBody = hdr[0], body
			switch hdr[0] {
			case 'D':
				rows++
				if rows%4 == 0 {
					time.Sleep(time.Millisecond) // ~4 rows (4 KB) per ms: reading, but slower than the server
				}
			case 'E':
				if !containsBytes(lastBody, "57014") {
					t.Errorf("got an ErrorResponse without 57014: %q", lastBody)
				}
			case 'Z':
				t.Fatalf("the 300 MB answer ended normally after %v: query_timeout did not fire", time.Since(start))
			}
		}
	})
}

func containsBytes(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		if string(b[i:i+len(s)]) == s {
			return true
		}
	}
	return false
}
