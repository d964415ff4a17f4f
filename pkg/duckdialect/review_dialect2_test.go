// Second review of the translation against PostgreSQL 15 (differential:
// the same query on PostgreSQL and, translated, on DuckDB). Each test
// asserts PostgreSQL's answer (or its error), or, where the fix is a
// refusal, that the query is refused naming the construct; each failed
// before its fix. Comments say what the translation did before.

package duckdialect

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// rv2Refused requires Translate to refuse each query with an
// *UnsupportedError naming the construct (the comments give PostgreSQL's
// answer and what the translation answered before).
func rv2Refused(t *testing.T, cases map[string]string) {
	t.Helper()
	for q, feature := range cases {
		_, err := Translate(q)
		var ue *UnsupportedError
		if !errors.As(err, &ue) {
			t.Errorf("%s: error %v, want *UnsupportedError", q, err)
			continue
		}
		if !strings.Contains(ue.Error(), feature) {
			t.Errorf("%s: %q does not name %q", q, ue.Error(), feature)
		}
	}
}

// IS [NOT] NULL of a boolean expression, and IS [NOT] UNKNOWN (rewritten
// to IS [NOT] NULL), lose their parentheses when deparsed: pg_query's
// deparseNullTest does not parenthesize an AND/OR/NOT argument, and IS
// binds tighter than AND, OR and NOT. "(a or b) is unknown" becomes
// "a OR b IS NULL", i.e. a OR (b IS NULL). The NOT that !~ becomes is
// hit the same way, as is IS NOT DISTINCT FROM.
// E.g. i = 2: PG (2 > 1 or 2 < 0) is unknown = false, DuckDB true. The
// left operand of IN and BETWEEN was hit too: "(i = 1) in (true)" came
// out as "i = 1 IN (true)", i = (1 IN (true)).
func TestDialect2ReviewNullTestOfBooleanExpression(t *testing.T) {
	runReviewCases(t, []reviewCase{
		{"ComparisonInListAndBetween", "select i, (i = 1) in (true) as a, (i > 1 or i < 0) between false and true as b from t order by i"},
		{"AndIsNull", "select i, (i > 0 and s > 'a') is null as a from t order by i"},
		{"OrIsUnknown", "select i, (i > 1 or i < 0) is unknown as b from t order by i"},
		{"NotIsNull", "select i, (not (i > 1)) is null as c from t order by i"},
		{"RegexNotMatchIsNotNull", "select i, (s !~ 'b') is not null as e from t order by i"},
		{"OrIsNotDistinctFrom", "select i, (i > 1 or i < 0) is not distinct from true as a from t order by i"},
	})
}

// substring with a NULL start or length is NULL in PostgreSQL (a strict
// function). The rewrite wraps the start in greatest(start, 1), and
// greatest ignores NULLs, so DuckDB answers the whole string ('abcdef')
// or an empty string (funcs.go substring).
func TestDialect2ReviewSubstringNullArguments(t *testing.T) {
	runReviewCases(t, []reviewCase{
		{"NullColumnPosition", "select substring('abcdef' from i) as a, substr('abcdef', i, 2) as b, substring('abcdef' from 2 for i) as c from t where i is null"},
		{"NullLiterals", "select substr('abc', 1, null) as a, substring('abc' from null::int) as b"},
	})
}

// An integer literal beyond int4 is int8 in PostgreSQL, and ::numeric makes
// it numeric: 3000000000::numeric / 7 = 428571428.57142857. numericCast
// returns such a literal (Fval without a point) unchanged as "already
// exact", so DuckDB reads a BIGINT and integer_division gives 428571428.
func TestDialect2ReviewBigIntegerLiteralToNumeric(t *testing.T) {
	runReviewCases(t, []reviewCase{
		{"CastThenDivide", "select 3000000000::numeric / 7 as a, cast(5000000000 as numeric) / 3 as b"},
	})
}

// PostgreSQL refuses text that is not an integer's digits: '1.5', '0x10',
// '1e3', '1_000'::int are errors. Only literals are checked (casts.go
// integerText); text from a column or subquery goes to DuckDB's cast,
// which answers 2, 16, 1000, 1000 (and 3 for '2.5'::bigint).
func TestDialect2ReviewTextToIntegerNotLiteral(t *testing.T) {
	runReviewCases(t, []reviewCase{
		{"Fraction", "select x::int as a from (values ('1.5')) v(x)"},
		{"Hex", "select x::int as a from (values ('0x10')) v(x)"},
		{"Exponent", "select x::int as a from (values ('1e3')) v(x)"},
		{"Underscore", "select x::int as a from (values ('1_000')) v(x)"},
		{"BigintFraction", "select x::bigint as a from (values ('2.5')) v(x)"},
	})
}

// float8 -> numeric(p,s): PostgreSQL converts the double through its
// 15-significant-digit text (1.005), then rounds half away: 1.01. DuckDB
// scales the binary value (1.00499999...) and gives 1.00.
func TestDialect2ReviewFloat8ToNumericRounding(t *testing.T) {
	runReviewCases(t, []reviewCase{
		{"Literal", "select 1.005::float8::numeric(10,2) as a"},
		{"Column", "select x::numeric(10,2) as a from (values (1.005::float8)) v(x)"},
	})
}

// In an ARE the first quantifier sets the whole expression's greediness:
// '(.*?)(\d+)(.*)' matches 'abc0' (PostgreSQL's documented example), so
// the replacement gives '01234xyz'; RE2 matched the whole string: '01234'.
// A later non-greedy quantifier differs the other way. Refused where the
// match is replaced; a match test (~) does not depend on greediness.
func TestDialect2ReviewRegexNonGreedyFirstQuantifier(t *testing.T) {
	rv2Refused(t, map[string]string{
		`select regexp_replace('abc01234xyz', '(.*?)(\d+)(.*)', '\2') as a`: "non-greedy quantifiers",
		`select regexp_replace('1ax2ax', '\d+(.*?)x', '-') as a`:            "non-greedy quantifiers",
	})
	runReviewCases(t, []reviewCase{
		{"MatchAllowed", `select 'abc01234xyz' ~ '(.*?)(\d+)' as a, 'a*?b' ~ 'a\*?b' as b`},
	})
}

// \s is [[:space:]] in an ARE and includes vertical tab (chr(11)); RE2's
// \s does not: PG true/false/'a-b', DuckDB false/true/'a\vb'. Translated
// to [[:space:]] (RE2's POSIX class has it).
func TestDialect2ReviewRegexClassesAndFolding(t *testing.T) {
	runReviewCases(t, []reviewCase{
		{"SpaceClassVerticalTab", `select chr(11) ~ '\s' as a, chr(11) ~ '^\S$' as b, regexp_replace('a' || chr(11) || 'b', '\s', '-') as c`},
		{"SpaceClassInBracket", `select regexp_replace('a' || chr(11) || 'b,c', '[\s,]', '-', 'g') as a, chr(11) ~ '[^\s]' as b`},
	})
}

// ~* and flag i with an ASCII pattern: PostgreSQL's C ctype folds ASCII
// only, RE2 also folds K (U+212A KELVIN SIGN) to k and ſ (U+017F) to s:
// PG false/false/'K', DuckDB true/true/'x'. Letters k and s, bracket
// expressions ([a-z], [^k]) and \w can all match them; refused.
func TestDialect2ReviewRegexCaseFoldingRefused(t *testing.T) {
	rv2Refused(t, map[string]string{
		"select chr(8490) ~* 'k' as a":                         "the letter k",
		"select chr(383) ~* 'S' as a":                          "the letter S",
		"select regexp_replace(chr(8490), 'k', 'x', 'i') as a": "the letter k",
		"select chr(8490) ~* '[a-z]' as a":                     "a bracket expression",
		`select chr(8490) ~* '\w' as a`:                        `\w`,
	})
	runReviewCases(t, []reviewCase{
		{"FoldAllowed", `select 'ABC' ~* 'abc' as a, 'X1' ~* 'x\d' as b`},
	})
}

// NULL / 0 is NULL in PostgreSQL (int4div is strict); the division guard
// raises 'division by zero' whatever the dividend, so sum(x) / count(x)
// over a group whose x are all NULL (NULL / 0) fails instead of answering
// NULL (ops.go nonZero).
func TestDialect2ReviewNullDividedByZero(t *testing.T) {
	runReviewCases(t, []reviewCase{
		{"SumOverCountOfNulls", "select sum(x) / count(x) as q, sum(x) % count(x) as m from (values (null::int)) v(x)"},
		{"NullRow", "select i / 0 as a from t where i is null"},
	})
	// The NULL test repeats the dividend; a chain of divisions must not
	// double the text at each step.
	q := "select i" + strings.Repeat(" / i", 40) + " as a from t"
	if s, err := Translate(q); err != nil || len(s) > 20000 {
		t.Errorf("40 chained divisions: %d bytes, %v", len(s), err)
	}
}

// Text to timestamp with more than 6 fractional digits: PostgreSQL rounds
// to the microsecond (.1234567 -> .123457, .9999995 -> the next second);
// DuckDB truncates (.123456, .999999). Such literals are refused (their
// type is not known where they are compared); text that is not a literal
// fails at run time.
func TestDialect2ReviewTimestampTextRoundsFraction(t *testing.T) {
	rv2Refused(t, map[string]string{
		"select '2020-01-01 00:00:00.1234567'::timestamp as a, '2020-01-01 00:00:00.9999995'::timestamp as b": "more than 6 fractional digits",
		"select count(*) as n from t where ts <= '2020-01-02 03:04:05.6779995'":                               "more than 6 fractional digits",
	})
	runReviewCases(t, []reviewCase{
		{"NotLiteral", "select x::timestamp as a from (values ('2020-01-01 00:00:00.9999995')) v(x)"},
		{"SixDigits", "select '2020-01-01 00:00:00.123456'::timestamp as a, x::timestamp as b from (values ('2020-01-01 00:00:00.5')) v(x)"},
	})
}

// Interval literals beyond the microsecond range (or int32 months and
// days) are an error in PostgreSQL ("interval field value out of range");
// parseInterval multiplied in int64 without overflow checks and wrote the
// wrapped value, e.g. -9223372033309551616 microseconds. Refused.
func TestDialect2ReviewIntervalLiteralOverflow(t *testing.T) {
	rv2Refused(t, map[string]string{
		"select interval '2562047789' hour as a":       "out of range",
		"select interval '3000000000 hours' as a":      "out of range",
		"select interval '2147483648 days' as a":       "out of range",
		"select interval '178956971' year as a":        "out of range",
		"select interval '-2562047789:00:00' as a":     "out of range",
		"select interval '9223372036854775 mins' as a": "out of range",
	})
	runReviewCases(t, []reviewCase{
		{"Limits", "select interval '2562047788' hour as a, interval '-2562047788 hours' as b, interval '2147483647 days' as c, interval '178956970 years' as d"},
	})
}

// % and mod() of double precision do not exist in PostgreSQL (an error);
// DuckDB answered fmod.
func TestDialect2ReviewFloatModulo(t *testing.T) {
	runReviewCases(t, []reviewCase{
		{"Divisor", "select 7 % 2::float8 as a"},
		{"CastDividend", "select mod(f::float8, 2) as a from t"},
		{"IntegerAndNumericStay", "select i % 2 as a, mod(n, 1) as b, 7.5 % 2 as c from t order by i"},
	})
}

// PostgreSQL 15 rejects numbers PostgreSQL 16 added (pg_query parses the
// PostgreSQL 17 grammar): "trailing junk after numeric literal". The
// translation read 0x1F as 31 and 1_000 as 1000.
func TestDialect2ReviewNewNumberSyntax(t *testing.T) {
	pg, _ := reviewEngines(t)
	for _, q := range []string{"select 0x1F as a", "select 1_000 as a", "select 0o17 as a", "select 0b101 as a", "select 1_000.5 as a", "select i from t where i < 1_0"} {
		if _, err := pgQuery(context.Background(), pg, q); err == nil {
			t.Errorf("%s: postgres accepted it; the case proves nothing", q)
		}
		_, err := Translate(q)
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(se.Message, "trailing junk") {
			t.Errorf("%s: error %v, want a *SyntaxError about trailing junk", q, err)
		}
		if _, err := IsQuery(q); err == nil {
			t.Errorf("IsQuery(%q) accepted it", q)
		}
	}
	for _, q := range []string{"select 1 as a_1_0", "select '0x1F' as x, 10 as a, 1.5e3 as b, 0 as c", "select 0 as x0b"} {
		if _, err := Translate(q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}
