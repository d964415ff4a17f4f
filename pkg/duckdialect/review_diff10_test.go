// Review of the 2026-12-06 duckdialect fixes (a397971), differential
// against PostgreSQL 15: each test asserts PostgreSQL's answer.

package duckdialect

import "testing"

// The float-modulo refusal (noFloatMod) tests typeof() at run time, but
// DuckDB computes as DOUBLE many values that are numeric in PostgreSQL:
// decimal division, avg/stddev of integers, extract(epoch ...). Their
// % and mod() now fail with "% and mod() of double precision or real do
// not exist in PostgreSQL"; before a397971 they answered.
func TestDiff10ReviewModuloOfNumericThatDuckDBComputesAsDouble(t *testing.T) {
	runReviewCases(t, []reviewCase{
		{"NumericDivision", "select i, (n / 2) % 1 as a from t order by i"},
		{"AvgOfInteger", "select avg(i) % 2 as a, mod(avg(i), 2) as b from t"},
		{"LiteralDivision", "select (7.5 / 2) % 1 as a"},
	})
}

// An ARE used by regexp_replace takes the longest match at the leftmost
// position even without | or a non-greedy quantifier: an optional atom
// is an alternation too. 'a?(ab)?' on 'ab': PostgreSQL matches 'ab' and
// answers 'X'; RE2 (leftmost-first) lets a? take 'a', matches 'a' and
// answers 'Xb'. checkPattern refused only | and non-greedy quantifiers.
func TestDiff10ReviewRegexpReplaceOptionalAtomLongestMatch(t *testing.T) {
	runReviewCases(t, []reviewCase{
		{"OptionalThenGroup", `select regexp_replace('ab', 'a?(ab)?', 'X') as a`},
		{"StarThenGroup", `select regexp_replace('aab', 'a*(ab)?', '[\1]') as a`},
	})
}
