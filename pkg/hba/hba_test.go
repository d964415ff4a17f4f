package hba

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `# TYPE  DATABASE        USER            ADDRESS                 METHOD
local   all             postgres                                ident
hostssl app             bob             10.0.0.0/8              scram-sha-256 clientcert=verify-ca
host    app             bob             10.1.0.0/16             reject
host    "all"           alice           127.0.0.1 255.255.255.255 md5
host    sameuser        all             127.0.0.0/8             trust
host    reports,app     @staff          ::1/128                 scram-sha-256
host    all             "Mixed Case","with ""quote"""  all    \
        password
hostnossl  all          carol           192.168.0.0/16          md5 # plain only
hostgssenc all          all             all                     trust
host    all             all             all                     reject
`

func parse(t *testing.T, text string) *Rules {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "staff"), []byte("dave, erin\nfrank\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pg_hba.conf")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	rs, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestMatch: the first matching line wins, by type, TLS, address,
// database and user, as PostgreSQL decides.
func TestMatch(t *testing.T) {
	rs := parse(t, sample)
	v4 := func(s string) netip.Addr { return netip.MustParseAddr(s) }
	for _, tc := range []struct {
		c    Client
		line int
		want Method
	}{
		{Client{"app", "bob", v4("10.1.2.3"), true}, 3, SCRAM},
		{Client{"app", "bob", v4("10.1.2.3"), false}, 4, Reject},
		{Client{"app", "bob", v4("10.2.2.3"), false}, 12, Reject}, // the last line
		{Client{"all", "alice", v4("127.0.0.1"), false}, 5, MD5},  // "all" quoted is a database named all
		{Client{"app", "alice", v4("127.0.0.1"), false}, 12, Reject},
		{Client{"alice", "alice", v4("127.0.0.2"), false}, 6, Trust}, // sameuser
		{Client{"alice", "alice", v4("::ffff:127.0.0.2"), false}, 6, Trust},
		{Client{"reports", "erin", netip.MustParseAddr("::1"), false}, 7, SCRAM}, // @staff
		{Client{"reports", "erin", v4("127.0.0.9"), false}, 12, Reject},
		{Client{"x", "Mixed Case", v4("8.8.8.8"), false}, 8, Password}, // continued line
		{Client{"x", `with "quote"`, v4("8.8.8.8"), true}, 8, Password},
		{Client{"x", "mixed case", v4("8.8.8.8"), false}, 12, Reject},
		{Client{"x", "carol", v4("192.168.1.1"), false}, 10, MD5},
		{Client{"x", "carol", v4("192.168.1.1"), true}, 12, Reject}, // hostnossl
	} {
		rule, ok := rs.Match(tc.c)
		if !ok || rule.Line != tc.line || rule.Method != tc.want {
			t.Errorf("%+v: line %d %s (%v), want line %d %s", tc.c, rule.Line, rule.Method, ok, tc.line, tc.want)
		}
	}
	if r, _ := rs.Match(Client{"app", "bob", v4("10.1.2.3"), true}); r.ClientCert != VerifyCA {
		t.Errorf("line 3's clientcert: %q", r.ClientCert)
	}
	if r, _ := rs.Match(Client{"app", "bob", v4("10.1.2.3"), false}); r.ClientCert != "" {
		t.Errorf("line 4's clientcert: %q", r.ClientCert)
	}
	if line := rs.FirstCertLine(); line != 3 {
		t.Errorf("FirstCertLine: %d", line)
	}
	if need, line := rs.NeedsSecrets(); !need || line != 3 {
		t.Errorf("NeedsSecrets: %v %d", need, line)
	}
	if need, line := parse(t, "host all all all trust\nhost all bob all password\n").NeedsSecrets(); !need || line != 2 {
		t.Errorf("NeedsSecrets of a password line: %v %d", need, line)
	}
	if err := rs.CheckLocal(true); err == nil || !strings.Contains(err.Error(), "pg_hba.conf:2: authentication method ident is not supported") {
		t.Errorf("an ident line with Unix-socket clients: %v", err)
	}
	if err := rs.CheckLocal(false); err != nil {
		t.Errorf("an ident line without Unix-socket clients: %v", err)
	}
	notes := strings.Join(rs.Notes, "\n")
	if !strings.Contains(notes, "pg_hba.conf:2: local lines never match") || strings.Contains(notes, "pg_hba.conf:8") {
		t.Errorf("notes:\n%s", notes)
	}

	// Local lines match clients without an IP address (a Unix socket), and
	// only them.
	rs = parse(t, "local all bob md5\nlocal all carol peer\nlocal all all reject\nhost all all all trust\n")
	if err := rs.CheckLocal(true); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c    Client
		want Method
	}{
		{Client{Database: "app", User: "bob"}, MD5},
		{Client{Database: "app", User: "carol"}, Peer},
		{Client{Database: "app", User: "eve"}, Reject},
		{Client{Database: "app", User: "bob", Addr: netip.MustParseAddr("127.0.0.1")}, Trust},
	} {
		if rule, ok := rs.Match(tc.c); !ok || rule.Method != tc.want {
			t.Errorf("%+v: %s %v, want %s", tc.c, rule.Method, ok, tc.want)
		}
	}
	if got := Rejected(Client{Database: "app", User: "eve"}); got != `pg_hba.conf rejects connection for host "[local]", user "eve", database "app", no encryption` {
		t.Errorf("Rejected, local: %s", got)
	}

	// Without the catch-all, nothing matches an unknown client.
	rs = parse(t, "host app bob 10.0.0.0/8 trust\n")
	if _, ok := rs.Match(Client{"app", "bob", netip.MustParseAddr("11.0.0.1"), false}); ok {
		t.Error("matched outside the address range")
	}
	if got := NoEntry(Client{"app", "bob", netip.MustParseAddr("11.0.0.1"), false}); got != `no pg_hba.conf entry for host "11.0.0.1", user "bob", database "app", no encryption` {
		t.Errorf("NoEntry: %s", got)
	}
	if got := Rejected(Client{"app", "bob", netip.MustParseAddr("::ffff:10.0.0.1"), true}); got != `pg_hba.conf rejects connection for host "10.0.0.1", user "bob", database "app", SSL encryption` {
		t.Errorf("Rejected: %s", got)
	}
	if need, _ := rs.NeedsSecrets(); need {
		t.Error("trust only: secrets needed")
	}
}

// TestParseErrors: every line qprouter cannot honour is refused, naming the
// file, the line and what is wrong.
func TestParseErrors(t *testing.T) {
	for text, want := range map[string]string{
		"host all all 127.0.0.1/32 peer\n":                               ":1: peer authentication is only supported on local sockets",
		"host all all 127.0.0.1/32 ident\n":                              ":1: authentication method ident is not supported",
		"local all all peer map=omicron\n":                               "",
		"local all all peer include_realm=0\n":                           ":1: options are not supported: include_realm=0",
		"host all all all cert\n":                                        ":1: cert authentication is only supported on hostssl connections",
		"hostssl all all all cert\n":                                     "",
		"host all all 127.0.0.1/32 md5 clientcert=verify-ca":             `:1: clientcert can only be configured for "hostssl" rows`,
		"hostssl all all all cert clientcert=verify-ca\n":                `:1: clientcert only accepts "verify-full" when using "cert" authentication`,
		"hostssl all all all md5 clientcert=maybe\n":                     `:1: invalid value for clientcert: "maybe"`,
		"hostssl all all all md5 clientcert\n":                           ":1: authentication option not in name=value format: clientcert",
		"hostssl all all all md5 clientname=DN\n":                        "",
		"hostssl all all all md5 clientname=UID\n":                       `:1: invalid value for clientname: "UID"`,
		"hostssl all all all md5 clientcert=verify-ca ldapport=x\n":      ":1: options are not supported: ldapport=x",
		"hostssl all all all md5 clientcert=verify-full clientname=CN\n": "",
		"hostssl all all all cert clientcert=verify-full\n":              "",
		"\nhost all all db.example.com trust\n":                          `:2: host name "db.example.com": host names are not supported`,
		"host all all samenet trust\n":                                   ":1: samenet is not supported",
		"host all all 127.0.0.1 trust\n":                                 ":1: IP address 127.0.0.1 has no mask",
		"host all all 127.0.0.1 x trust\n":                               ":1: invalid IP mask \"x\"",
		"host all all 127.0.0.1 255.0.255.0 trust\n":                     "not contiguous",
		"host all all 127.0.0.1\n":                                       ":1: IP address 127.0.0.1 has no mask",
		"host all all 300.0.0.0/8 trust\n":                               `invalid IP address or mask "300.0.0.0/8"`,
		"hots all all all trust\n":                                       `:1: invalid connection type "hots"`,
		"host samerole all all trust\n":                                  "samerole: role membership is not known to these rules",
		"host all +admins all trust\n":                                   "+admins: role membership",
		"host all all all trust,md5\n":                                   "the method is one word",
		"host all all all frobnicate\n":                                  `invalid authentication method "frobnicate"`,
		"host all \"bob all all trust\n":                                 "unterminated quoted string",
		"host all bob, carol all trust\n":                                "",
		"host all bob, all trust\n":                                      `host name "trust"`, // "bob, all" is one list, as in PostgreSQL
		"host all bob,\n":                                                "a list ends with a comma",
		"host all @missing all trust\n":                                  "missing",
		"host all all\n":                                                 "end of line before the address field",
	} {
		path := filepath.Join(t.TempDir(), "hba.conf")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if want == "" {
			if err != nil {
				t.Errorf("%q: %v", text, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), path) {
			t.Errorf("%q: %v, want %q after the path", text, err, want)
		}
	}
}
