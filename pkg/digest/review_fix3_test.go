package digest

import "testing"

// A ROLLUP or CUBE nested in GROUPING SETS holds column positions just as
// a top-level one does: PostgreSQL resolves GROUPING SETS (ROLLUP (1, 2))
// to the output columns, and pg_stat_statements keeps ROLLUP (1, 2) and
// ROLLUP (2, 1) as two queryids. Since posInner, a bracket opened after a
// word inside the grouping-set bracket is taken for a function call, so
// the positions in it become placeholders and two query shapes merge
// (before the change both were kept, as the depth >= posDepth test held).
func TestFixReviewNestedRollupInGroupingSetsPositions(t *testing.T) {
	c := rvConnect(t)
	for _, p := range [][2]string{
		{"select a, b, count(*) from t group by grouping sets (rollup (1, 2))", "select a, b, count(*) from t group by grouping sets (rollup (2, 1))"},
		{"select a, b, count(*) from t group by grouping sets (a, cube (1, 2))", "select a, b, count(*) from t group by grouping sets (a, cube (2, 1))"},
	} {
		idA, textA := c.entry(p[0])
		idB, textB := c.entry(p[1])
		if idA == idB {
			t.Fatalf("PostgreSQL gives %q and %q one queryid; the premise of this test is wrong", p[0], p[1])
		}
		na, fa := Normalize(p[0])
		nb, fb := Normalize(p[1])
		if fa == fb {
			t.Errorf("two query shapes merged: %q and %q both normalize to %q / %q (pg_stat_statements: %q and %q)", p[0], p[1], na, nb, textA, textB)
		}
	}
}
