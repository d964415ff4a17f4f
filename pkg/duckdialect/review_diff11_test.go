// Review of today's duckdialect changes (ed53f93), differential against
// PostgreSQL 15: each case asserts PostgreSQL's answer.

package duckdialect

import (
	"context"
	"errors"
	"testing"
)

// rv11Diff11Run runs each query on PostgreSQL and, translated, on DuckDB.
// With mustTranslate, a refusal is a failure (PostgreSQL answers the
// query and the translation would answer identically); otherwise a
// refusal keeps the promise, as in runReviewCases.
func rv11Diff11Run(t *testing.T, mustTranslate bool, cases []reviewCase) {
	pg, duck := reviewEngines(t)
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, perr := pgQuery(ctx, pg, c.sql)
			tr, err := Translate(c.sql)
			var ue *UnsupportedError
			if errors.As(err, &ue) {
				if mustTranslate && perr == nil {
					t.Fatalf("refused (%v), but postgres answers %q and the pattern has at most one variable quantifier", err, want.rows)
				}
				return
			}
			if err != nil {
				t.Fatalf("translate: %v", err)
			}
			got, derr := duckQuery(ctx, duck, tr)
			switch {
			case perr != nil && derr == nil:
				t.Fatalf("postgres fails (%v) but the translation answers %q\ntranslated: %s", perr, got.rows, tr)
			case perr != nil:
				return
			case derr != nil:
				t.Fatalf("postgres answers %q but duckdb fails: %v\ntranslated: %s", want.rows, derr, tr)
			}
			if e := sameResult(want, got); e != nil {
				t.Errorf("%v\ntranslated: %s", e, tr)
			}
		})
	}
}

// variableQuantifier reads a "?" right after "(" as the "?" of a "(?:"
// group, also when the "(" is the escaped literal "\(": then "\(?" (an
// optional parenthesis) is not counted, and a pattern with two variable
// quantifiers slips through. PostgreSQL (longest match) replaces "(b";
// RE2 (first match) lets \(? take "(" and replaces only it: "Xb".
func TestDiff11ReviewRegexpReplaceEscapedParenQuantifierSlipsThrough(t *testing.T) {
	rv11Diff11Run(t, false, []reviewCase{
		{"EscapedParenOptional", `select regexp_replace('(b', '\(?(\(b)?', 'X') as a`},
	})
}

// A literal "}" (no bound opened before it) is counted as a variable
// quantifier, so common patterns with one real quantifier are refused:
// removing a trailing comma or blanks before a closing brace. PostgreSQL
// answers them; RE2 answers the same (one variable quantifier).
func TestDiff11ReviewRegexpReplaceLiteralBraceRefused(t *testing.T) {
	rv11Diff11Run(t, true, []reviewCase{
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
	rv11Diff11Run(t, false, []reviewCase{
		{"CTEAvg", "with s as (select avg(i) as a from t) select a % 2 as m from s"},
		{"SubqueryDivision", "select i, x % 1 as m from (select i, n / 2 as x from t) s order by i"},
		{"SubqueryModFunc", "select mod(a, 2) as m from (select avg(i) as a from t) s"},
	})
}
