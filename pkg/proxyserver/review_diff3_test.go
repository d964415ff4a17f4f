// Review of 88519c4 (regressions and gaps of its diff).

package proxyserver

import (
	"strings"
	"testing"
	"time"
)

// Gap of 88519c4's fix. docs/qprouter.md --query-timeout promises that a
// client that reads on after the timeout gets the rows already on their
// way, then the FATAL, in whole messages; 88519c4 made flushServer
// (proxy/session.go) leave the server open when a timeout failed the
// write, so that the relay finishes the row it is in. But handle
// (proxy/session.go, the branch for a message larger than the server's
// 16 KiB write buffer) writes straight to srv.Net and, on the error the
// timeout's past write deadline gives it, still closes srv.Net under the
// relay: the relay's next read fails with net.ErrClosed (not the deadline
// finishAfterTimeout waits for) and the FATAL lands inside the DataRow.
// A client that sends one statement of more than 16 KiB (a big INSERT, a
// COPY data chunk) after the timeout and reads on gets a broken stream.
func TestDiff3ReviewQueryTimeoutBigMessageAfterTimeoutCutMidRow(t *testing.T) {
	lw := &rvLog{marker: "timeout=query_timeout", hit: make(chan struct{})}
	addr := rv2Serve(t, lw, func(c *Config) { c.QueryTimeout = 4 * time.Second })
	big := hsQuery("select '" + strings.Repeat("y", 64<<10) + "'")
	if bad := rv2TimedOutStream(t, addr, lw, big, 100*time.Millisecond); bad != "" {
		t.Errorf("query_timeout, a client reading its answer that sent a 64 KiB query after the timeout (then read on within 0.1 s): %s", bad)
	}
}
