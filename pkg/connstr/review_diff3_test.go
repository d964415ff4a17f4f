// Review of 88519c4 (regressions and gaps of its diff).

package connstr

import (
	"strings"
	"testing"
)

// Gap of 88519c4. Redact promises to edit URLs as text so that "libpq's
// forms that net/url refuses" are redacted too, a password "as written".
// libpq (conninfo_uri_parse) takes everything up to the first '@' or '/'
// after "://" as the user info, so a '?' written raw in the password (or
// in the user name before it) is part of it: psql 15 connects to
// 127.0.0.1 port 1 with 'postgres://bob:pa?ss@127.0.0.1:1/db' ("connection
// to server at 127.0.0.1, port 1 failed: Connection refused"), i.e. it
// read user bob, password pa?ss. Redact ends the user info at the first
// '/' or '?' (strings.IndexAny(rest, "/?")), finds no '@' before it and
// returns the string unchanged, password and all. Before 88519c4
// qprouter's redact gave "(unparsable url)" for it.
func TestDiff3ReviewRedactRawQuestionMarkInUserInfo(t *testing.T) {
	for _, c := range []struct{ in, secret string }{
		{"postgres://bob:pa?ss@127.0.0.1:1/db", "pa?ss"},
		{"postgresql://bob:s3cret?x@db1:5432,db2/app?sslmode=require", "s3cret"},
		{"postgres://b?b:s3cret@db/app", "s3cret"},
	} {
		got := Redact(c.in)
		if strings.Contains(got, c.secret) {
			t.Errorf("Redact(%q) = %q: the password %q is shown", c.in, got, c.secret)
		}
	}
}
