package hba

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"net/netip"
	"strings"
	"testing"
)

// TestDecide: each line's method, with peer, cert and clientcert checked
// before any password, in PostgreSQL's words.
func TestDecide(t *testing.T) {
	rs := parse(t, `local   all  pete   peer
hostssl all  carl   all  cert
hostssl all  vera   all  md5 clientcert=verify-ca
hostssl all  fred   all  password clientcert=verify-full
host    all  mo     all  md5
host    all  sam    all  scram-sha-256
host    all  tom    all  trust
host    all  ron    all  reject
`)
	ip := netip.MustParseAddr("10.0.0.1")
	certFor := func(cn string) *x509.Certificate { return &x509.Certificate{Subject: pkix.Name{CommonName: cn}} }
	yes := func() (string, bool) { return "pete", true }
	no := func() (string, bool) { return "root", true }
	unknown := func() (string, bool) { return "", false }
	for _, tc := range []struct {
		c      Client
		cert   *x509.Certificate
		peer   func() (string, bool)
		want   Method
		refuse string
	}{
		{Client{"db", "pete", netip.Addr{}, false}, nil, yes, Trust, ""},
		{Client{"db", "pete", netip.Addr{}, false}, nil, no, Reject, `Peer authentication failed for user "pete"`},
		{Client{"db", "pete", netip.Addr{}, false}, nil, unknown, Reject, `Peer authentication failed for user "pete"`},
		{Client{"db", "pete", netip.Addr{}, false}, nil, nil, Reject, `Peer authentication failed for user "pete"`},
		{Client{"db", "carl", ip, true}, certFor("carl"), nil, Trust, ""},
		{Client{"db", "carl", ip, true}, certFor("bob"), nil, Reject, `certificate authentication failed for user "carl"`},
		{Client{"db", "carl", ip, true}, nil, nil, Reject, "connection requires a valid client certificate"},
		{Client{"db", "vera", ip, true}, certFor("someone"), nil, MD5, ""},
		{Client{"db", "vera", ip, true}, nil, nil, Reject, "connection requires a valid client certificate"},
		{Client{"db", "fred", ip, true}, certFor("fred"), nil, Password, ""},
		{Client{"db", "fred", ip, true}, certFor("vera"), nil, Reject, `certificate authentication failed for user "fred"`},
		{Client{"db", "mo", ip, false}, nil, nil, MD5, ""},
		{Client{"db", "sam", ip, false}, nil, nil, SCRAM, ""},
		{Client{"db", "tom", ip, false}, nil, nil, Trust, ""},
		{Client{"db", "ron", ip, false}, nil, nil, Reject, `pg_hba.conf rejects connection for host "10.0.0.1", user "ron", database "db", no encryption`},
		{Client{"db", "vera", ip, false}, nil, nil, Reject, `no pg_hba.conf entry for host "10.0.0.1", user "vera", database "db", no encryption`},
	} {
		m, why := rs.Decide(tc.c, tc.cert, tc.peer)
		if m != tc.want || why != tc.refuse {
			t.Errorf("%+v: %s %q, want %s %q", tc.c, m, why, tc.want, tc.refuse)
		}
	}
}

// TestCheck: rules a server cannot honour are refused at load, naming the
// line and the setting that would make them work.
func TestCheck(t *testing.T) {
	all := Server{UnixSocket: true, Secrets: true, CA: true}
	for text, want := range map[string]string{
		"host all all all md5\n":                              ":1 asks for a password: HINT-S",
		"host all all all trust\nhost all all all password\n": ":2 asks for a password: HINT-S",
		"hostssl all all all cert\n":                          ":1 checks client certificates (cert, clientcert): HINT-C",
		"hostssl all all all trust clientcert=verify-ca\n":    ":1 checks client certificates (cert, clientcert): HINT-C",
	} {
		rs := parse(t, text)
		if err := rs.Check(all); err != nil {
			t.Errorf("%q with everything offered: %v", text, err)
		}
		s := Server{SecretsHint: "HINT-S", CAHint: "HINT-C", UnixSocket: true}
		if err := rs.Check(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
	// A local line with a method no server here runs: refused only where
	// Unix-socket clients are served.
	rs := parse(t, "local all all ident\nhost all all all trust\n")
	if err := rs.Check(Server{UnixSocket: true}); err == nil || !strings.Contains(err.Error(), ":1: authentication method ident is not supported") {
		t.Errorf("ident with a Unix socket: %v", err)
	}
	if err := rs.Check(Server{}); err != nil {
		t.Errorf("ident without a Unix socket: %v", err)
	}
}

// TestIdentMaps: map= lets a system name (the peer's operating-system
// user, a certificate's common name) be another database user, literally
// or by a regex with \1; without the map the names must be equal.
func TestIdentMaps(t *testing.T) {
	rs := parse(t, `local   all  all  peer map=ops
hostssl all  all  all  cert map=certs
`)
	var err error
	rs.Idents, err = ParseIdent(strings.NewReader(`# MAPNAME  SYSTEM-USERNAME     PG-USERNAME
ops        root                postgres
ops        root                admin
ops        /^(.*)_svc$         \1
certs      "CN With Space"     alice
certs      /^(.*)@example\.com$  \1
`), "pg_ident.conf")
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Check(Server{UnixSocket: true, CA: true}); err != nil {
		t.Fatal(err)
	}
	os := func(name string) func() (string, bool) { return func() (string, bool) { return name, true } }
	certFor := func(cn string) *x509.Certificate { return &x509.Certificate{Subject: pkix.Name{CommonName: cn}} }
	ip := netip.MustParseAddr("10.0.0.1")
	for _, tc := range []struct {
		c    Client
		peer func() (string, bool)
		cert *x509.Certificate
		want Method
	}{
		{Client{"db", "postgres", netip.Addr{}, false}, os("root"), nil, Trust},
		{Client{"db", "admin", netip.Addr{}, false}, os("root"), nil, Trust},
		{Client{"db", "root", netip.Addr{}, false}, os("root"), nil, Reject}, // the map has no root -> root
		{Client{"db", "billing", netip.Addr{}, false}, os("billing_svc"), nil, Trust},
		{Client{"db", "billing", netip.Addr{}, false}, os("billing_svc2"), nil, Reject},
		{Client{"db", "postgres", netip.Addr{}, false}, os("Root"), nil, Reject}, // case matters
		{Client{"db", "alice", ip, true}, nil, certFor("CN With Space"), Trust},
		{Client{"db", "bob", ip, true}, nil, certFor("bob@example.com"), Trust},
		{Client{"db", "bob", ip, true}, nil, certFor("bob@example.org"), Reject},
		{Client{"db", "bob", ip, true}, nil, certFor("bob"), Reject}, // with a map, the name alone is not enough
	} {
		if m, why := rs.Decide(tc.c, tc.cert, tc.peer); m != tc.want {
			t.Errorf("%+v as %v: %s %q, want %s", tc.c, tc.cert != nil, m, why, tc.want)
		}
	}

	for text, want := range map[string]string{
		"ops root\n":                "want MAPNAME SYSTEM-USERNAME DATABASE-USERNAME, got 2 fields",
		"ops root,admin postgres\n": "multiple values in ident field",
		"ops /( postgres\n":         "invalid regular expression",
		"ops /^x$ \\\\1\n":          "has no subexpressions",
		"ops \"root postgres\n":     "unterminated quoted string",
	} {
		if _, err := ParseIdent(strings.NewReader(text), "pg_ident.conf"); err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "pg_ident.conf:1: ") {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
	// A map= the ident file lacks, or no ident file at all, stops the load.
	rs.Idents, _ = ParseIdent(strings.NewReader("other a b\n"), "pg_ident.conf")
	if err := rs.Check(Server{UnixSocket: true, CA: true}); err == nil || !strings.Contains(err.Error(), ":1 uses map=ops, which pg_ident.conf does not define") {
		t.Errorf("a missing map: %v", err)
	}
	rs.Idents = nil
	if err := rs.Check(Server{UnixSocket: true, CA: true, IdentHint: "HINT"}); err == nil || !strings.Contains(err.Error(), ":1 uses map=ops: HINT") {
		t.Errorf("no ident file: %v", err)
	}
	// As PostgreSQL 15: no map on a password line, even with
	// clientcert=verify-full (whose name check is then exact).
	for _, text := range []string{"host all all all md5 map=x\n", "hostssl all all all md5 clientcert=verify-full map=x\n"} {
		if _, err := Parse(strings.NewReader(text), "pg_hba.conf"); err == nil || !strings.Contains(err.Error(), `authentication option "map" is only valid for`) {
			t.Errorf("%q: %v", text, err)
		}
	}
}
