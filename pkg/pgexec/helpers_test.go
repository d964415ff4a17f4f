// Test helpers: the shared cluster, pools, fake validators and assertions.

package pgexec

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// allowAll is a fake validator that accepts everything, so the tests show
// what the executor alone guarantees.
type allowAll struct{}

func (allowAll) Validate(string) error { return nil }

var errRefused = errors.New("refused by the fake validator")

// refuseMarker refuses texts containing "REFUSE".
type refuseMarker struct{}

func (refuseMarker) Validate(sql string) error {
	if strings.Contains(sql, "REFUSE") {
		return errRefused
	}
	return nil
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newPool opens an executor pool on the shared cluster. With
// sessionReadOnly false the pool lacks default_transaction_read_only, so a
// test sees the envelope's guarantee alone.
func newPool(t testing.TB, maxConns int, sessionReadOnly bool) *pgxpool.Pool {
	t.Helper()
	db := pgtest.Shared(t)
	cfg, err := pgxpool.ParseConfig(db.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = int32(maxConns)
	ConfigurePool(cfg)
	if !sessionReadOnly {
		delete(cfg.ConnConfig.RuntimeParams, "default_transaction_read_only")
	}
	pool, err := pgxpool.NewWithConfig(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func newExec(t testing.TB, pool *pgxpool.Pool, opts Options) *Executor {
	t.Helper()
	e, err := New(pool, allowAll{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// admin is a plain superuser connection for setup and for looking at the
// database from outside the executor.
func admin(t testing.TB) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(testCtx(t), pgtest.Shared(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func mustExec(t testing.TB, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(testCtx(t), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func queryInt(t testing.TB, conn *pgx.Conn, sql string) int64 {
	t.Helper()
	var n int64
	if err := conn.QueryRow(testCtx(t), sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// run calls e.Run and fails the test on error.
func run(t testing.TB, e *Executor, sql string, params ...any) Result {
	t.Helper()
	res, err := e.Run(testCtx(t), sql, params, nil)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if !json.Valid(res.JSON) {
		t.Fatalf("%s: invalid JSON: %s", sql, res.JSON)
	}
	return res
}

// queryErr runs sql expecting a *QueryError.
func queryErr(t testing.TB, e *Executor, sql string) *QueryError {
	t.Helper()
	_, err := e.Run(testCtx(t), sql, nil, nil)
	var qe *QueryError
	if !errors.As(err, &qe) {
		t.Fatalf("%s: want *QueryError, got %v", sql, err)
	}
	return qe
}

// assertPoolIdle checks that nothing is checked out and that every
// connection in the pool is idle outside a transaction and still works.
func assertPoolIdle(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	// pgxpool destroys a closed connection in the background; wait for it.
	st := pool.Stat()
	for deadline := time.Now().Add(2 * time.Second); st.AcquiredConns() != 0 && time.Now().Before(deadline); st = pool.Stat() {
		time.Sleep(time.Millisecond)
	}
	if st.AcquiredConns() != 0 {
		t.Fatalf("%d connections still checked out", st.AcquiredConns())
	}
	if st.TotalConns() > pool.Config().MaxConns {
		t.Fatalf("%d connections, more than MaxConns %d", st.TotalConns(), pool.Config().MaxConns)
	}
	conns := pool.AcquireAllIdle(testCtx(t))
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	for _, c := range conns {
		if s := c.Conn().PgConn().TxStatus(); s != 'I' {
			t.Fatalf("pooled connection in transaction state %q", s)
		}
		var one int
		if err := c.QueryRow(testCtx(t), "SELECT 1").Scan(&one); err != nil {
			t.Fatalf("pooled connection broken: %v", err)
		}
	}
}
