package copybin

import (
	"strings"
	"testing"
)

func TestTrimSpaces(t *testing.T) {
	for _, s := range []string{"", " ", "a", "a ", "  a", "DELIVER IN PERSON        ", "NONE" + strings.Repeat(" ", 21), strings.Repeat(" ", 17), "x\x00 \t  ", "é  "} {
		if got, want := string(trimSpaces([]byte(s))), strings.TrimRight(s, " "); got != want {
			t.Errorf("trimSpaces(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestAppendChar(t *testing.T) {
	for in, want := range map[byte]string{0: "", 'a': "a", 0xe9: `\351`, 0x80: `\200`, 0x7f: "\x7f"} {
		if got := string(appendChar(nil, []byte{in})); got != want {
			t.Errorf("appendChar(%#x) = %q, want %q", in, got, want)
		}
	}
}
