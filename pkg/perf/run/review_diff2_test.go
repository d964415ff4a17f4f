// Review of f4b4242 (redact in the run record).

package run

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// rv2Leaks reports whether redact left a form of password in its output.
func rv2Leaks(got string, forms ...string) bool {
	for _, f := range forms {
		if strings.Contains(got, f) {
			return true
		}
	}
	return false
}

// f4b4242 rebuilds a postgres:// URL with net/url to replace a
// percent-encoded password; when net/url cannot parse the URL, redactArg
// falls back to looking for the decoded password in the text as written,
// which is never there. pgx (which perfrun connects with) accepts URLs
// that net/url refuses: libpq's Unix-socket form with a percent-encoded
// directory as host (postgres://u:pw@%2Ftmp/db, libpq docs 34.1.1.2) and
// a host list in which a host other than the last has a port. Either,
// with a password that a URL must percent-encode (@ / : % # ...), goes
// into the run record's args in the clear.
func TestDiff2ReviewRedactURLsNetURLRejects(t *testing.T) {
	for _, a := range []string{
		"postgres://bob:p%40ss%2Fw0rd@%2Fvar%2Frun%2Fpostgresql/tpch",
		"--database-url=postgres://bob:p%40ss%2Fw0rd@%2Ftmp:5432/tpch",
		"postgres://bob:p%40ss%2Fw0rd@db1:5432,db2/tpch",
	} {
		url := a[strings.Index(a, "postgres://"):]
		cfg, err := pgx.ParseConfig(url)
		if err != nil || cfg.Password != "p@ss/w0rd" {
			t.Fatalf("pgx.ParseConfig(%q) = password %q, %v: the URL should be usable", url, cfg.Password, err)
		}
		if got := redactArg(a); rv2Leaks(got, "p%40ss%2Fw0rd", "p@ss/w0rd") {
			t.Errorf("redact(%q) = %q: the password is in the run record", a, got)
		}
	}
}

// A key=value connection string's password is looked for as it was
// parsed, not as it is written: a quoted one with \' or \\, or an
// unquoted one with a backslash-escaped space (libpq's escapes, which pgx
// reads), is never found and stays in the run record. qprouter's own
// redact (proxyserver/serve.go dsnPassword) replaces the written value.
// It also leaves ?sslpassword= (the client key's passphrase), which
// qprouter's redact hides for the same reason.
func TestDiff2ReviewRedactKeyValueEscapesAndSSLPassword(t *testing.T) {
	for _, c := range []struct{ arg, parsed string }{
		{`host=db user=bob password='it\'s-s3cret'`, "it's-s3cret"},
		{`--database-url=host=db user=bob password=back\\sl4sh`, `back\sl4sh`},
		{`host=db user=bob password=two\ w0rds`, "two w0rds"},
	} {
		v := c.arg[strings.Index(c.arg, "host="):]
		if cfg, err := pgx.ParseConfig(v); err != nil || cfg.Password != c.parsed {
			t.Fatalf("pgx.ParseConfig(%q): %v", v, err)
		}
		if got := redactArg(c.arg); rv2Leaks(got, c.parsed, "s3cret", "sl4sh", "w0rds") {
			t.Errorf("redact(%q) = %q: the password is in the run record", c.arg, got)
		}
	}
	for _, a := range []string{
		"postgres://bob@db/tpch?sslmode=verify-full&sslkey=/k.pem&sslpassword=k3y-phrase",
		"host=db user=bob sslkey=/k.pem sslpassword=k3y-phrase",
	} {
		if got := redactArg(a); rv2Leaks(got, "k3y-phrase") {
			t.Errorf("redact(%q) = %q: the client key's passphrase is in the run record", a, got)
		}
	}
}
