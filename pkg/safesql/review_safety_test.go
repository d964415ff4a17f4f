// Review of the read-only guarantee (safesql): each test asserts the
// promised behaviour and fails on the code under review.

package safesql

import "testing"

// Found in review: PostgreSQL's field-selection syntax is also a function call: for
// (expr).f and rel.f, transformIndirection / transformColumnRef call
// ParseFuncOrColumn, which runs any one-argument function f(expr) when no
// column f exists. It is not limited to composite arguments: on
// PostgreSQL 15, SELECT (1).pg_sleep sleeps, SELECT (42::bigint).pg_advisory_lock
// takes a session-level advisory lock, SELECT ('/etc/passwd'::text).pg_read_file
// reads a server file, and g.pg_sleep with g a scalar function in FROM
// calls pg_sleep(g). The validator walks A_Indirection and ColumnRef
// without looking at their String fields, so every refused one-argument
// function is reachable this way, including ts_stat, which runs the SQL
// text it is given. docs/safesql.md: "Every function not on the allowlist
// (functions.go), wherever it appears" is refused, and names pg_sleep,
// advisory locks, pg_read_file, pg_terminate_backend, ts_stat and setseed
// as refused on purpose.
func TestSafetyReviewAttributeNotationCallsRefusedFunctions(t *testing.T) {
	v, err := New(Options{CacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		`SELECT (1).pg_sleep`,
		`SELECT (42::bigint).pg_advisory_lock`,
		`SELECT ((SELECT 42::bigint)).pg_try_advisory_lock`,
		`SELECT ('/etc/passwd'::text).pg_read_file`,
		`SELECT ('.'::text).pg_ls_dir`,
		`SELECT (pg_backend_pid()).pg_terminate_backend`,
		`SELECT ('SELECT to_tsvector(''a'')'::text).ts_stat`,
		`SELECT (0.5).setseed`,
		`SELECT g.pg_sleep FROM generate_series(1, 1) AS g`,
		`SELECT g.pg_advisory_lock FROM generate_series(42::bigint, 42) AS g`,
		`SELECT v.pg_read_file FROM unnest(ARRAY['/etc/passwd']) AS v`,
		`SELECT 1 ORDER BY (1).pg_sleep`,
	} {
		if err := v.Validate(sql); err == nil {
			t.Errorf("accepted %q: PostgreSQL runs the refused function named after the dot (attribute notation)", sql)
		}
	}
}
