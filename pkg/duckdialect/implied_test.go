package duckdialect

import "testing"

// TestImpliedFilters pins the conjuncts an OR implies, and the ORs that
// imply none.
func TestImpliedFilters(t *testing.T) {
	checkTranslations(t, map[string]string{
		// Values in every arm: their union; a column one arm leaves free: nothing.
		"select a from t, u where (t.x = 1 and u.y = 2) or (t.x = 3 and u.z = 4)": "SELECT a FROM t, u WHERE ((t.x = 1 AND u.y = 2) OR (t.x = 3 AND u.z = 4)) AND t.x IN (1, 3)",
		// Ranges: the least lower and the greatest upper bound, evaluated
		// exactly; the same set in every arm is left to DuckDB.
		"select a from t where (x between 1 and 5 and y = 1) or (x >= 3 and x < 10 + 2 and y = 1)": "SELECT a FROM t WHERE ((x BETWEEN 1 AND 5 AND y = 1) OR (x >= 3 AND x < (10 + 2) AND y = 1)) AND x >= 1 AND x <= (10 + 2)",
		// Either side of the operator; IN lists; values turned into bounds
		// where another arm has a range; -0.5 below 1.
		"select a from t where (2 < x and x <= 4) or x in (1.5, 7) or x = -0.5": "SELECT a FROM t WHERE ((2 < x AND x <= 4) OR x IN (1.5, 7) OR x = -0.5) AND x >= -0.5 AND x <= 7",
		// Strings and casts dedupe; order of first appearance.
		"select a from t where (s = 'b' and d = date '2020-01-01') or (s in ('a', 'b') and d = date '2020-01-01')": "SELECT a FROM t WHERE ((s = 'b' AND d = '2020-01-01'::date) OR (s IN ('a', 'b') AND d = '2020-01-01'::date)) AND s IN ('b', 'a')",
		// Nothing implied: an arm without the column, NULL, a column on
		// both sides, NOT IN, the same value in every arm.
		"select a from t where (x = 1 and y = 2) or z = 3":                   "SELECT a FROM t WHERE (x = 1 AND y = 2) OR z = 3",
		"select a from t where (x = null and y = 1) or (x = 2 and y = b)":    "SELECT a FROM t WHERE (x = NULL AND y = 1) OR (x = 2 AND y = b)",
		"select a from t where x not in (1, 2) or x not in (3)":              "SELECT a FROM t WHERE x NOT IN (1, 2) OR x NOT IN (3)",
		"select a from t where (x > y and w = 1) or (x > 2 and w = 1 and v)": "SELECT a FROM t WHERE (x > y AND w = 1) OR (x > 2 AND w = 1 AND v)",
		// In a subquery too.
		"select * from (select a from t where (x = 1 and y = 1) or (x = 2 and y = 3)) s": "SELECT * FROM (SELECT a FROM t WHERE ((x = 1 AND y = 1) OR (x = 2 AND y = 3)) AND x IN (1, 2) AND y IN (1, 3)) s",
	})
}
