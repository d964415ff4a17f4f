// Review of 7294a03 (regressions of today's diff).

package proxyserver

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// rvLog is a log writer that signals when a line containing marker appears.
type rvLog struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	hit    chan struct{}
	once   sync.Once
}

func (w *rvLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if bytes.Contains(w.buf.Bytes(), []byte(w.marker)) {
		w.once.Do(func() { close(w.hit) })
	}
	return len(p), nil
}

// docs/qprouter.md --transaction-timeout: the client "is sent FATAL 25P04
// ... its server connection is discarded, which rolls the transaction
// back". Since 7294a03 a timeout on a goroutine's relay no longer closes
// the server socket (idle.go timeOut: a past read deadline only, so the
// relay can finish its row): while the relay is blocked writing to a
// client that does not read (up to stalledClient), the server connection
// stays open and the client goroutine (session mode: a reader goroutine
// relays) still forwards what the client sends. A COMMIT sent after the
// timeout fired reaches the backend, which has finished the big SELECT
// and sits idle in the transaction, and commits it. Before 7294a03 the
// socket was closed under mu and the write failed: the transaction was
// rolled back.
func TestDiffReviewTimedOutTransactionStillCommits(t *testing.T) {
	cl := pgtest.Shared(t)
	ctx := context.Background()
	direct := pgxConnect(t, cl.URL())
	defer direct.Exec(ctx, "drop table if exists zz_diff_tx")
	if _, err := direct.Exec(ctx, "create table if not exists zz_diff_tx (id int)"); err != nil {
		t.Fatal(err)
	}
	// The result must fill the client's side (so the relay blocks) but
	// fit the server's side (so the backend goes idle in the transaction);
	// an attempt where it does not is inconclusive and the next size runs.
	for _, rows := range []int{3000, 4500, 6000} {
		if _, err := direct.Exec(ctx, "truncate zz_diff_tx"); err != nil {
			t.Fatal(err)
		}
		idle, committed := rvTimedOutCommit(t, cl, direct, rows)
		if committed {
			t.Errorf("transaction_timeout fired (FATAL 25P04 promised, the transaction rolled back), yet a COMMIT the client sent "+
				"right after it reached the server and committed the transaction's INSERT (%d-row answer not read)", rows)
			return
		}
		if idle {
			return // the backend could run the COMMIT, and did not get it
		}
		// inconclusive (the answer fit the client's side, or not the
		// server's; or the server was closed at once): the next size
	}
}

func rvTimedOutCommit(t *testing.T, cl *pgtest.Cluster, direct *pgx.Conn, rows int) (idle, committed bool) {
	ctx := context.Background()
	lw := &rvLog{marker: "transaction_timeout", hit: make(chan struct{})}
	c := hsConfig(cl, false)
	c.PoolMode = "session"
	c.TxTimeout = time.Second
	c.LogLevel = "debug" // timeOut logs "closing a client" with the timeout's name
	_, addr := serveForTest(t, Options{Config: c, Logs: lw})
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	cn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close()
	cn.Write(hsStartup())
	hsReadUntil(t, cn, 'Z')
	cn.Write(hsQuery("begin; insert into zz_diff_tx values (1)"))
	hsReadUntil(t, cn, 'Z')
	cn.Write(hsQuery(fmt.Sprintf("select repeat('x', 1000) from generate_series(1, %d)", rows))) // not read
	select {
	case <-lw.hit:
	case <-time.After(10 * time.Second):
		t.Fatal("transaction_timeout 1s did not fire in 10 s")
	}
	var st string
	direct.QueryRow(ctx, "select coalesce(string_agg(state, ','), '') from pg_stat_activity where query like 'select repeat%'").Scan(&st)
	cn.Write(hsQuery("commit")) // the client did not see the FATAL yet: it is not reading
	time.Sleep(2200 * time.Millisecond)
	var k int
	if err := direct.QueryRow(ctx, "select count(*) from zz_diff_tx").Scan(&k); err != nil {
		t.Fatal(err)
	}
	return st == "idle in transaction", k > 0
}

// docs/qprouter.md (reload): "TLS itself, on or off and required or not,
// stays as at the start" and a reload that changes a restart-only setting
// "logs a warning naming it and keeps its value". A reload whose file
// drops tls_cert, tls_key and require_tls (TLS to be turned off at the
// next restart) along with a change of pool_size was accepted before
// 7294a03 (warnings; the certificate and require_tls kept; pool_size
// applied). apply now runs Check on the config merged by keepFixed
// (require_tls kept = true) before its own step that keeps tls_cert and
// tls_key, so the reload is refused with "--require-tls needs --tls-cert
// and --tls-key", a setting the file does not even have, and the new
// pool_size is not applied.
func TestDiffReviewReloadDroppingTLSRefused(t *testing.T) {
	cl := pgtest.Shared(t)
	c := valid()
	c.ServerURL = fmt.Sprintf("postgres://127.0.0.1:%d/postgres?sslmode=disable", cl.Port)
	c.TLSCert, c.TLSKey = rvAuthCert(t, t.TempDir())
	c.RequireTLS = true
	nc := c
	nc.TLSCert, nc.TLSKey, nc.RequireTLS = "", "", false
	nc.PoolSize = 7
	s, _ := serveForTest(t, Options{Config: c, Load: func() (Config, error) { return nc, nil }})
	if err := s.Reload(); err != nil {
		t.Errorf("a reload dropping TLS (kept until a restart, with a warning) and changing pool_size was refused: %v", err)
	}
	if got, _ := s.get(); got.PoolSize != 7 || !got.RequireTLS || got.TLSCert != c.TLSCert {
		t.Errorf("after the reload: pool_size %d (want 7), require_tls %v (want true, fixed), tls_cert %q (want kept %q)",
			got.PoolSize, got.RequireTLS, got.TLSCert, c.TLSCert)
	}
}
