// Second review of the read-only guarantee (safesql + pgexec) against a
// real PostgreSQL 15: statements the server does not stop at their
// statement_timeout or at a cancel.

package pgexec

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/qpkit/qpkit/pkg/safesql"
)

// Some built-ins never check for interrupts, and their cost grows with the
// product of two input sizes (each statement below runs about 5-8 s on
// this machine): substring search (strpos, position, replace, split_part;
// varlena.c text_position_next), the containment operators of arrays
// (@>, <@, &&; arrayfuncs.c array_contain_compare) and of jsonb
// (JsonbDeepContains), a jsonpath comparison of two sequences
// (jsonpath_exec.c executePredicate). The validator accepts them, and the
// call used to take as long as the statement: statement_timeout did not
// bound it (found in review). The watchdog now ends the call a moment
// after the timeout, with the timeout's error.
var uninterruptible = map[string]string{
	"strpos":   `SELECT strpos(repeat('a', 3000000), 'b' || repeat('a', 5000))`,
	"array":    `SELECT array(SELECT generate_series(1, 80000)) @> array(SELECT generate_series(80000, 1, -1))`,
	"jsonpath": `SELECT jsonb_path_exists(jsonb_build_object('a', to_jsonb(array(SELECT generate_series(1, 22000))), 'b', to_jsonb(array(SELECT -generate_series(1, 22000)))), '$.a[*] == $.b[*]')`,
}

func TestSafe2ReviewUninterruptibleCallsEndAtTimeout(t *testing.T) {
	for name, sql := range uninterruptible {
		t.Run(name, func(t *testing.T) {
			v := newValidator(t, safesql.Options{CacheSize: -1})
			pool := newPool(t, 1, true) // its Close waits for the lingering connection
			e, err := New(pool, v, Options{StatementTimeout: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = e.Run(testCtx(t), sql, nil, nil)
			took := time.Since(start)
			var qe *QueryError
			if !errors.As(err, &qe) || !qe.TimedOut || qe.SQLState != codeQueryCanceled {
				t.Fatalf("err %v, want the statement timeout", err)
			}
			t.Logf("%v: %v", took.Round(time.Millisecond), err)
			// The timeout, the watchdog's second, the cancel's grace, and
			// a second for a busy machine.
			if limit := 3100 * time.Millisecond; took > limit {
				t.Errorf("the call took %v with a 100ms statement_timeout, past %v:\n%s", took.Round(time.Millisecond), limit, sql)
			}
		})
	}
}

// The same statements used to defeat the pool bound (found in review): a
// canceled call whose 57014 did not come within the grace closed its
// connection, the pool opened another one, and the old backend ran on, so
// an agent canceling again and again could keep any number of backends
// busy (docs/pgexec.md: a pool of N connections, at most N backends). The
// connection now keeps its slot until the server is done with it.
func TestSafe2ReviewCanceledStatementKeepsItsSlot(t *testing.T) {
	v := newValidator(t, safesql.Options{CacheSize: -1})
	pool := newPool(t, 1, true)
	e, err := New(pool, v, Options{StatementTimeout: 100 * time.Millisecond, AcquireTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	a := admin(t)
	const sql = `SELECT /* safe2-linger */ strpos(repeat('a', 3000000), 'b' || repeat('a', 5000))`
	running := func() int64 {
		return queryInt(t, a, `SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%safe2-linger */ strpos%' AND pid <> pg_backend_pid()`)
	}
	for i := range 2 {
		_, err := e.Run(testCtx(t), sql, nil, nil)
		var busy *PoolBusyError
		switch {
		case i == 0 && err == nil, i == 1 && !errors.As(err, &busy):
			t.Fatalf("call %d: %v", i, err)
		case i == 1 && !strings.Contains(err.Error(), "1 of them still held by canceled statements"):
			t.Errorf("the pool-busy error does not say why: %v", err)
		}
	}
	if n := running(); n != 1 {
		t.Errorf("after two calls on a 1-connection pool, %d backends run the statement; want 1 (DestroyedConns=%d)", n, e.DestroyedConns())
	}
	deadline := time.Now().Add(30 * time.Second)
	for running() > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	// The server is done: the slot is free again.
	var res Result
	for time.Now().Before(deadline) {
		if res, err = e.Run(testCtx(t), "SELECT 1", nil, nil); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil || res.Rows != 1 {
		t.Errorf("after the statement ended: %v", err)
	}
}
