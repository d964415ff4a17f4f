package safesql

import (
	"strings"
	"testing"
)

// CheckParseDepth lets flat lists through however long and still counts
// every chain that nests the tree: across a bracket, and for keywords
// across commas.
func TestCheckParseDepth(t *testing.T) {
	n := 5000
	ones := strings.Repeat("+1", n)
	for _, c := range []struct {
		what, sql string
		refused   bool
	}{
		{"IN list of casts", "select 1 where d in (" + strings.TrimSuffix(strings.Repeat("'1995-01-01'::date, ", 3*n), ", ") + ")", false},
		{"VALUES of negative numbers", "select * from (values " + strings.TrimSuffix(strings.Repeat("(0.5, -0.25), ", 3*n), ", ") + ") v(a, b)", false},
		{"select list of sums", "select " + strings.TrimSuffix(strings.Repeat("a+b, ", 3*n), ", "), false},
		{"one chain", "select 1" + ones + ones, true},
		{"a chain around a bracketed chain", "select (1" + ones + ")" + ones, true},
		{"a chain in a function call, then outside", "select f(1, 1" + ones + ")" + ones, true},
		{"UNION chain with commas", "select 1" + strings.Repeat(", 1 union select 1", 2*n), true},
		{"chains in separate elements", "select 1" + ones + ", 1" + ones, false},
	} {
		if got := CheckParseDepth(c.sql, 500, 8000) != nil; got != c.refused {
			t.Errorf("%s: refused %v, want %v", c.what, got, c.refused)
		}
	}
}
