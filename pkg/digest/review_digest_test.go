// Review tests (TestDigestReview*): shapes against PostgreSQL 15's
// pg_stat_statements, and the store's percentiles and timestamps.

package digest

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

// rvPG is one PostgreSQL 15 cluster with pg_stat_statements for this
// file's tests, started on first use (its watchdog removes it when the
// test binary exits).
var (
	rvOnce    sync.Once
	rvCluster *pgtest.Cluster
	rvErr     error
)

type rvConn struct {
	t    *testing.T
	ctx  context.Context
	conn *pgx.Conn
}

func rvConnect(t *testing.T) *rvConn {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster")
	}
	rvOnce.Do(func() {
		rvCluster, rvErr = pgtest.StartCluster(pgtest.Options{Settings: map[string]string{
			"shared_preload_libraries":         "pg_stat_statements",
			"pg_stat_statements.track_utility": "off",
		}})
		if rvErr != nil {
			return
		}
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, rvCluster.URL())
		if err != nil {
			rvErr = err
			return
		}
		defer conn.Close(ctx)
		for _, sql := range []string{
			"create extension pg_stat_statements",
			"create table t (a int, b int, rows int, first int)",
			"insert into t values (1, 10, 5, 7), (2, 20, 6, 8)",
		} {
			if _, err := conn.Exec(ctx, sql); err != nil {
				rvErr = err
				return
			}
		}
	})
	if rvErr != nil {
		t.Fatalf("cluster: %v", rvErr)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, rvCluster.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return &rvConn{t: t, ctx: ctx, conn: conn}
}

// entry runs sql alone with the simple protocol, as a client's text
// arrives at the proxy, and returns pg_stat_statements' queryid and text.
func (c *rvConn) entry(sql string) (int64, string) {
	c.t.Helper()
	if _, err := c.conn.Exec(c.ctx, "select pg_stat_statements_reset()"); err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.conn.PgConn().Exec(c.ctx, sql).ReadAll(); err != nil {
		c.t.Fatalf("%q: %v", sql, err)
	}
	var id int64
	var text string
	if err := c.conn.QueryRow(c.ctx, "select queryid, query from pg_stat_statements where query not like '%pg_stat_statements%'").Scan(&id, &text); err != nil {
		c.t.Fatalf("%q: reading its pg_stat_statements entry: %v", sql, err)
	}
	return id, text
}

// Positional references are not only in ORDER BY and GROUP BY lists: DISTINCT ON (1),
// GROUP BY ROLLUP (1, 2) / GROUPING SETS (1, 2) and a parenthesized ORDER BY (2)
// all name output columns, as PostgreSQL resolves them (findTargetlistEntrySQL92).
// The normalizer turns them into placeholders, so queries over different columns
// become one shape while pg_stat_statements keeps them apart (and prints the 1 and 2).
func TestDigestReviewPositionalReferencesBeyondByLists(t *testing.T) {
	c := rvConnect(t)
	for _, p := range [][2]string{
		{"select distinct on (1) a, b from t", "select distinct on (2) a, b from t"},
		{"select a, b, count(*) from t group by rollup (1, 2)", "select a, b, count(*) from t group by rollup (2, 1)"},
		{"select a, b, count(*) from t group by grouping sets (1, 2)", "select a, b, count(*) from t group by grouping sets (2, 1)"},
		{"select a, b from t order by (1)", "select a, b from t order by (2)"},
	} {
		idA, textA := c.entry(p[0])
		idB, textB := c.entry(p[1])
		if idA == idB {
			t.Fatalf("PostgreSQL gives %q and %q one queryid; the premise of this test is wrong", p[0], p[1])
		}
		na, fa := Normalize(p[0])
		if fb := Fingerprint(p[1]); fa == fb {
			t.Errorf("two different queries are one shape %q:\n  %q\n  %q\n(pg_stat_statements: %q and %q, two queryids)", na, p[0], p[1], textA, textB)
		}
	}
}

// PostgreSQL's lexer ends a -- comment at \n or \r (scan.l: non_newline is
// [^\n\r]). The normalizer ends it at \n only, so with a lone \r as line end
// everything after the comment is dropped: a filtered statement becomes the
// shape of the unfiltered one.
func TestDigestReviewLineCommentEndsAtCarriageReturn(t *testing.T) {
	c := rvConnect(t)
	withComment := "select a from t -- all of them?\rwhere a = 1"
	plain := "select a from t"
	idA, textA := c.entry(withComment)
	idB, _ := c.entry(plain)
	if idA == idB {
		t.Fatalf("PostgreSQL gives %q and %q one queryid; the premise of this test is wrong", withComment, plain)
	}
	var n int
	if err := c.conn.QueryRow(c.ctx, "select count(*) from ("+withComment+"\n) s").Scan(&n); err != nil || n != 1 {
		t.Fatalf("PostgreSQL should apply the where clause after the comment: %d rows, %v", n, err)
	}
	got, fp := Normalize(withComment)
	if fp == Fingerprint(plain) {
		t.Errorf("Normalize(%q) = %q: the where clause after the \\r-ended comment is lost (pg_stat_statements: %q), want \"select a from t where a = $1\"", withComment, got, textA)
	}
	if want := "select a from t where a = $1"; got != want {
		t.Errorf("Normalize(%q) = %q, want %q", withComment, got, want)
	}
}

// A column whose name is a non-reserved keyword in the normalizer's list of
// words an expression may follow (rows, first, ...) is an operand: the minus
// after it is binary, as PostgreSQL parses and prints it ("rows - $1"). The
// normalizer folds the minus into the constant and the operator disappears
// from the text it shows.
func TestDigestReviewMinusAfterKeywordNamedColumn(t *testing.T) {
	c := rvConnect(t)
	for _, p := range [][2]string{
		{"select rows - 1 from t", "select rows - $1 from t"},
		{"update t set first = first - 1 where a = 5", "update t set first = first - $1 where a = $2"},
	} {
		_, pgText := c.entry(p[0])
		if pgText != p[1] {
			t.Fatalf("pg_stat_statements shows %q as %q; the premise of this test is wrong", p[0], pgText)
		}
		if got, _ := Normalize(p[0]); got != p[1] {
			t.Errorf("Normalize(%q) = %q, want %q (the binary minus is lost)", p[0], got, p[1])
		}
	}
}

// The histogram's counters are uint32 and stop at 2^32-1 while calls keeps
// counting, so once a shape's common bucket has saturated the nearest rank
// ceil(q*calls) lies beyond the histogram's total and p99 reads as the
// maximum. A proxy at 20k statements per second of one shape gets there in
// under three days. Here: 5 billion calls near 100 µs and 0.5 % at 1 s.
func TestDigestReviewHistogramSaturation(t *testing.T) {
	st := NewStore(0)
	fast, slow := 100*time.Microsecond, time.Second
	st.Observe("p", "r", "select 1", fast, 1, "")
	st.Observe("p", "r", "select 1", slow, 1, "")
	var e *entry
	for _, v := range st.m {
		e = v
	}
	// The state Observe leaves after 5e9 fast and 2.5e7 slow calls: the
	// fast bucket stopped at 2^32-1 (hist.add does not count past it).
	const nFast, nSlow = 5_000_000_000, 25_000_000
	e.h[histIndex(int64(fast))] = math.MaxUint32
	e.h[histIndex(int64(slow))] = nSlow
	e.calls = nFast + nSlow
	e.total = nFast*fast + nSlow*slow
	// One more call shows the drift: calls grows, the bucket does not.
	st.Observe("p", "r", "select 1", fast, 1, "")
	if e.h[histIndex(int64(fast))] != math.MaxUint32 || e.calls != nFast+nSlow+1 {
		t.Fatalf("setup: bucket %d, calls %d", e.h[histIndex(int64(fast))], e.calls)
	}
	shapes, _ := st.Snapshot()
	// The exact nearest-rank p99 is the ceil(0.99*calls)-th = 4,974,750,001st
	// smallest duration: a fast one (100 µs).
	p99 := time.Duration(shapes[0].P99Ns)
	if p99 > fast+fast/16 || p99 < fast-fast/16 {
		t.Errorf("p99 = %v after %d calls of which 99.5%% took %v, want within 6.25%% of %v", p99, shapes[0].Calls, fast, fast)
	}
}

// last_seen can go backwards, and end up before first_seen: Observe reads the
// clock before it takes the store's lock, so a call that read the clock first
// but got the lock second overwrites a later last_seen with an earlier time.
func TestDigestReviewLastSeenNotBeforeFirstSeen(t *testing.T) {
	st := NewStore(0)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	calls := 0
	aRead, bDone := make(chan struct{}), make(chan struct{})
	st.now = func() time.Time {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		switch n {
		case 1: // goroutine A reads t0, then is held before the lock
			close(aRead)
			<-bDone
			return t0
		default: // goroutine B, a millisecond later
			return t0.Add(time.Millisecond)
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		st.Observe("p", "r", "select 1", time.Millisecond, 1, "")
	}()
	<-aRead
	st.Observe("p", "r", "select 2", time.Millisecond, 1, "")
	close(bDone)
	wg.Wait()
	shapes, _ := st.Snapshot()
	if len(shapes) != 1 || shapes[0].Calls != 2 {
		t.Fatalf("shapes: %+v", shapes)
	}
	if sh := shapes[0]; sh.LastSeen.Before(sh.FirstSeen) {
		t.Errorf("last_seen %v is before first_seen %v", sh.LastSeen.Format(time.RFC3339Nano), sh.FirstSeen.Format(time.RFC3339Nano))
	}
}
