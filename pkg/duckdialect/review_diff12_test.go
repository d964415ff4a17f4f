// Review of 1c0c9e0 (duckdialect: regex quantifiers counted only for real
// bounds), differential against PostgreSQL 15: each case asserts
// PostgreSQL's answer (rv11Diff11Run, review_diff11_test.go).

package duckdialect

import "testing"

// A "}" that closes no bound is an ordinary character in an ARE, and
// 1c0c9e0 stopped counting it as a variable quantifier, but checkPattern
// still sets quantified = true for it (regex.go:152-153), so a "?" right
// after it (the literal brace made optional, the pattern's only variable
// quantifier) is refused as a non-greedy quantifier. PostgreSQL answers;
// RE2 reads "}?" the same way (one greedy quantifier).
func TestDiff12ReviewRegexpReplaceOptionalLiteralBraceRefused(t *testing.T) {
	runTranslationCases(t, true, []reviewCase{
		{"OptionalClosingBrace", `select regexp_replace('${HOME}/bin', '\$\{HOME}?', '/root') as a`},
		{"LiteralBraceOptional", `select regexp_replace('a}b', 'a}?', 'X') as a`},
	})
}

// PostgreSQL's bounds go up to 255 (DUPMAX): "{1,300}" is ERROR 2201B
// "invalid repetition count(s)". checkPattern now parses bounds
// (variableQuantifier, digits) but passes any count to RE2, which allows
// up to 1000, so qpanalytics answers a query PostgreSQL refuses (here a
// common "1 to 300 letters" validation).
func TestDiff12ReviewRegexBoundOver255Answered(t *testing.T) {
	runTranslationCases(t, false, []reviewCase{
		{"Match", `select 'abc' ~ '^[a-z]{1,300}$' as a`},
		{"Replace", `select regexp_replace('abc', '[a-z]{1,256}', 'X') as a`},
	})
}
