// Review of the read-only guarantee (safesql + pgexec) against a real
// PostgreSQL 15: each test asserts the promised behaviour and fails on the
// code under review.

package pgexec

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/qpkit/qpkit/pkg/safesql"
)

// Found in review: The validator lets "(expr).fn" and "rel.fn" through (it does not
// look at the field names of A_Indirection and ColumnRef), and PostgreSQL
// reads a field selection with no such column as the call fn(expr) for
// any one-argument function. Through the real validator and the executor:
//   - SELECT (42::bigint).pg_advisory_lock takes a session-level advisory
//     lock, which ROLLBACK does not release; the connection goes back to
//     the pool holding it (docs/pgexec.md: "session-level advisory locks
//     ... survive ROLLBACK. The validator must refuse those functions").
//   - SELECT ('PG_VERSION'::text).pg_read_file reads a server file
//     (docs/safesql.md lists pg_read_file as refused on purpose).
func TestSafetyReviewAttributeNotationRunsRefusedFunctions(t *testing.T) {
	v := newValidator(t, safesql.Options{CacheSize: -1})
	pool := newPool(t, 1, true)
	e, err := New(pool, v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := admin(t)

	if _, err := e.Run(testCtx(t), "SELECT (424242::bigint).pg_advisory_lock", nil, nil); err == nil {
		n := queryInt(t, a, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 424242 AND granted")
		t.Cleanup(func() { e.pool.Reset() })
		if n > 0 {
			t.Errorf("SELECT (424242::bigint).pg_advisory_lock was accepted and left a session-level advisory lock "+
				"on the pooled connection after the call (%d held); the next caller inherits it", n)
		}
	}

	res, err := e.Run(testCtx(t), "SELECT ('PG_VERSION'::text).pg_read_file AS f", nil, nil)
	if err == nil && strings.Contains(string(res.JSON), "15") {
		t.Errorf("SELECT ('PG_VERSION'::text).pg_read_file was accepted and read a server file: %s", res.JSON)
	}
}

// Found in review: xpath() (and xmlexists, XMLTABLE) are on the function allowlist,
// but PostgreSQL evaluates the XPath expression inside libxml2, which
// never checks for interrupts: statement_timeout (and the executor's
// cancel request) take effect only when libxml2 returns. A short
// accepted statement with a cubic XPath expression over a generated
// document keeps a backend busy for seconds to minutes (about 3 s for 1,200
// elements, 13 s for 2,400, growing with the cube) whatever the
// timeout. docs/safesql.md ("Residual risks", Cost) and docs/pgexec.md
// promise that expensive valid queries "are bounded by statement_timeout";
// here a 100 ms timeout is overrun many times over.
func TestSafetyReviewXPathEscapesStatementTimeout(t *testing.T) {
	v := newValidator(t, safesql.Options{CacheSize: -1})
	pool := newPool(t, 1, true)
	e, err := New(pool, v, Options{StatementTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	sql := `SELECT xpath('count(//a/following::a/following::a)', ('<r>' || repeat('<a/>', 1500) || '</r>')::xml)`
	start := time.Now()
	_, err = e.Run(testCtx(t), sql, nil, nil)
	took := time.Since(start)
	var r *safesql.Refusal
	if errors.As(err, &r) {
		return // refused: fine
	}
	if took > time.Second {
		t.Errorf("accepted statement ran %v with a 100ms statement_timeout (err: %v): libxml2's XPath evaluation is not interruptible", took.Round(time.Millisecond), err)
	}
}
