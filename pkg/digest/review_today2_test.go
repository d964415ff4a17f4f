package digest

import "testing"

// Positions are kept inside DISTINCT ON (...) and ROLLUP/CUBE/GROUPING
// SETS (...) since today, but at any depth: an integer that is an argument
// of a function call in those brackets (round(a, 1), mod(b, 3)) is taken
// for an output-column position and kept as a literal. Queries that differ
// only in such a constant become separate shapes, where pg_stat_statements
// gives them one queryid (and prints $n for the constant), and the
// package promises constants of every kind become placeholders.
func TestTodayReviewConstantInFunctionInsidePositionBrackets(t *testing.T) {
	c := rvConnect(t)
	for _, p := range [][2]string{
		{"select distinct on (round(a, 1)) a from t", "select distinct on (round(a, 2)) a from t"},
		{"select a, count(*) from t group by rollup (a, mod(b, 3))", "select a, count(*) from t group by rollup (a, mod(b, 4))"},
		{"select a, count(*) from t group by cube (a, abs(1))", "select a, count(*) from t group by cube (a, abs(2))"},
	} {
		idA, textA := c.entry(p[0])
		idB, _ := c.entry(p[1])
		if idA != idB {
			t.Fatalf("PostgreSQL gives %q and %q two queryids; the premise of this test is wrong", p[0], p[1])
		}
		na, fa := Normalize(p[0])
		nb, fb := Normalize(p[1])
		if fa != fb {
			t.Errorf("one query shape split in two: %q and %q (pg_stat_statements: one queryid, %q)", na, nb, textA)
		}
	}
}
