// Review of de2c2f0 (duckdialect regex bounds), differential against
// PostgreSQL 15 (rv11Diff11Run, review_diff11_test.go).

package duckdialect

import "testing"

// In an ARE a "{" followed by a digit always opens a bound; anything but
// digits, one "," and "}" inside it is ERROR 2201B "invalid repetition
// count(s)" in PostgreSQL. checkPattern only refuses a "{digit" with no
// "}" anywhere after it (regex.go:153); when a "}" follows but the body
// is not a bound (isBound false) the "}" is taken as an ordinary
// character and RE2 matches the whole thing literally, so qpanalytics
// answers where PostgreSQL fails.
func TestDiff13ReviewRegexMalformedBoundAnswered(t *testing.T) {
	runTranslationCases(t, false, []reviewCase{
		{"LetterInBound", `select 'a{1x}' ~ 'a{1x}' as a`},
		{"BlankInBound", `select 'a{1 }' ~ 'a{1 }' as a`},
		{"EscapedClose", `select 'a{2}' ~ 'a{2\}' as a`},
		{"ClosedLaterInBracket", `select 'a{1]' ~ 'a{1[}]' as a`},
		{"Replace", `select regexp_replace('x{1a}y', 'x{1a}', 'Z') as a`},
	})
}
