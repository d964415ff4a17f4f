package proxy_test

// Review of the proxy's operational paths (cancel, COPY, notices,
// ParameterStatus, server and client ends, timeouts, large messages).
// Checked and found to agree with a direct PostgreSQL 15 connection (no
// test kept): CopyFail and a bad row mid-COPY (simple and extended, also
// pgx-style without waiting for CopyInResponse, two COPYs in one Query),
// NOTICE runs, 2 MB notices and errors, 1,500-column rows, 30 MB and
// 10 MB values both ways, ParameterStatus after moving servers (SET,
// SET LOCAL, set_config), pg_terminate_backend of the server idle in and
// out of a transaction, the server's idle_in_transaction_session_timeout,
// the acquire timeout's 53300 (simple and extended, goroutine and loop).

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// A COMMIT (or any statement) pipelined with Terminate in one write is
// run by PostgreSQL before it reads the Terminate: the transaction
// commits. Through the proxy the COMMIT stays in the server connection's
// write buffer (it is flushed only once the client's read buffer is
// empty), the Terminate ends the session and the connection is closed
// with the COMMIT unsent: the transaction is rolled back, silently.
func TestTerminateReviewCommitThenTerminateLost(t *testing.T) {
	execDirect(t, "drop table if exists zz_qt; create table zz_qt (m text)")
	c := pgtest.Shared(t)
	direct := fmt.Sprintf("127.0.0.1:%d", c.Port)
	d := traceDial(t, direct, nil)
	rows := func(tag string) string {
		return d.query(t, "select count(*) from zz_qt where m = '"+tag+"'")
	}
	commitThenTerminate := func(addr, tag string) {
		cl := traceDial(t, addr, nil)
		cl.query(t, "begin")
		cl.query(t, "insert into zz_qt values ('"+tag+"')")
		cl.send(t, &pgproto3.Query{String: "commit"}, &pgproto3.Terminate{})
		cl.conn.Close()
	}
	want := "T D(1) C(SELECT 1) Z(I) "
	waitRow := func(tag string) string {
		var got string
		for range 30 {
			if got = rows(tag); got == want {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		return got
	}
	commitThenTerminate(direct, "direct")
	if got := waitRow("direct"); got != want {
		t.Fatalf("direct connection: %q, want %q", got, want)
	}
	for _, m := range traceModes {
		t.Run(m.name, func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m.mode, size: 2, loop: m.loop, timeout: 3 * time.Second})
			commitThenTerminate(r.addr, m.name)
			if got := waitRow(m.name); got != want {
				t.Errorf("COMMIT sent with Terminate in one write: the row count is %q, want %q (committed, as on a direct connection)", got, want)
			}
		})
	}
}
