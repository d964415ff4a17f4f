// Review of today's duckdialect changes (ed53f93), differential against
// PostgreSQL 15: each case asserts PostgreSQL's answer.

package duckdialect

import (
	"testing"
)

// variableQuantifier reads a "?" right after "(" as the "?" of a "(?:"
// group, also when the "(" is the escaped literal "\(": then "\(?" (an
// optional parenthesis) is not counted, and a pattern with two variable
// quantifiers slips through. PostgreSQL (longest match) replaces "(b";
// RE2 (first match) lets \(? take "(" and replaces only it: "Xb".
func TestDiff11ReviewRegexpReplaceEscapedParenQuantifierSlipsThrough(t *testing.T) {
	runTranslationCases(t, false, []reviewCase{
		{"EscapedParenOptional", `select regexp_replace('(b', '\(?(\(b)?', 'X') as a`},
	})
}

// A literal "}" (no bound opened before it) is counted as a variable
// quantifier, so common patterns with one real quantifier are refused:
// removing a trailing comma or blanks before a closing brace. PostgreSQL
// answers them; RE2 answers the same (one variable quantifier).
func TestDiff11ReviewRegexpReplaceLiteralBraceRefused(t *testing.T) {
	runTranslationCases(t, true, []reviewCase{
		{"TrailingComma", `select regexp_replace('{"a":1, }', ',\s*}', '}') as a`},
		{"BlanksBeforeBrace", `select regexp_replace('{"a":1   }', ' +}', '}') as a`},
	})
}

// The typeof() guard is put on every column reference, but a column of a
// subquery or CTE may be a value PostgreSQL computes as numeric and
// DuckDB as a double (avg of an integer, numeric division): % and mod()
// of it then raise "% and mod() of double precision or real do not exist
// in PostgreSQL", where the same expression written inline answers.
func TestDiff11ReviewModuloOfSubqueryColumnComputedAsDouble(t *testing.T) {
	runTranslationCases(t, false, []reviewCase{
		{"CTEAvg", "with s as (select avg(i) as a from t) select a % 2 as m from s"},
		{"SubqueryDivision", "select i, x % 1 as m from (select i, n / 2 as x from t) s order by i"},
		{"SubqueryModFunc", "select mod(a, 2) as m from (select avg(i) as a from t) s"},
	})
}
