// Unpaired surrogate escapes in json, which DuckDB's JSON cannot read.

package copybin

import "testing"

func TestLoneSurrogate(t *testing.T) {
	for s, want := range map[string]bool{
		`["\ud800", 2]`:    true,  // a high one alone
		`"\udc00"`:         true,  // a low one alone
		`"\ud800\u0041"`:   true,  // a high one before another escape
		`"\ud800x"`:        true,  // a high one before a character
		`"x\"\ud800"`:      true,  // after an escaped quote
		`"\ud83d\ude00"`:   false, // a pair
		`"\\ud800"`:        false, // an escaped backslash, then text
		`"a\u0041"`:        false,
		`{"k": "\u00e9"}`:  false,
		`"\ud83d\ude00\\"`: false,
	} {
		if got := loneSurrogate([]byte(s)); got != want {
			t.Errorf("loneSurrogate(%s) = %v, want %v", s, got, want)
		}
	}
}
