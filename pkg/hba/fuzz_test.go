package hba

import (
	"net/netip"
	"strings"
	"testing"
)

// FuzzParse: any bytes give rules or an error naming a line, never a
// panic, and rules that parse can be matched.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{sample, "host all all 127.0.0.1 255.255.255.0 md5\n", "local all all peer\n",
		"host \"a\"\"b\",c @x ::1/128 trust # c\n", "host all all all \\\n reject\n", "hostssl sameuser all 10.0.0.0/8 scram-sha-256 x=y\n",
		"local all all peer map=m\nm /^(.*)$ \\1\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		rs, err := Parse(strings.NewReader(text), "fuzz.conf")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.conf") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		rs.CheckLocal(true)
		// The same bytes as an ident file, for the lines' map= options.
		if ids, err := ParseIdent(strings.NewReader(text), "fuzz.conf"); err == nil {
			rs.Idents = ids
		} else if !strings.HasPrefix(err.Error(), "fuzz.conf") {
			t.Fatalf("ident error without the file name: %v", err)
		}
		osUser := func() (string, bool) { return "b", true }
		for _, c := range []Client{{Database: "a", User: "b"}, {Database: "all", User: "all", Addr: netip.MustParseAddr("10.1.2.3"), TLS: true}} {
			if rule, ok := rs.Match(c); ok && rule.Line < 1 {
				t.Fatalf("matched rule without a line: %+v", rule)
			}
			if m, why := rs.Decide(c, nil, osUser); m == Reject && why == "" {
				t.Fatalf("a refusal without words for %+v", c)
			}
		}
	})
}
