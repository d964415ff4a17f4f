package hba

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// certWith issues a self-signed certificate whose subject is rdns as given.
func certWith(t *testing.T, rdns pkix.RDNSequence) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := asn1.Marshal(rdns)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), RawSubject: raw, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func atv(oid asn1.ObjectIdentifier, v string) pkix.AttributeTypeAndValue {
	return pkix.AttributeTypeAndValue{Type: oid, Value: v}
}

var (
	oidCN    = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidC     = asn1.ObjectIdentifier{2, 5, 4, 6}
	oidO     = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidOU    = asn1.ObjectIdentifier{2, 5, 4, 11}
	oidDC    = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}
	oidEmail = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
)

// TestDN: the subjects print as PostgreSQL (OpenSSL 3, `openssl x509
// -noout -subject -nameopt RFC2253`, which the wanted strings were taken
// from) prints them: last RDN first, a multi-valued RDN joined by "+",
// OpenSSL's short names, an unnamed type as OID=#DER, RFC 2253 escapes and
// non-ASCII bytes as \XX.
func TestDN(t *testing.T) {
	for _, tc := range []struct {
		rdns pkix.RDNSequence
		want string
	}{
		{pkix.RDNSequence{{atv(oidC, "US")}, {atv(oidO, "Example, Inc.")}, {atv(oidCN, "alice")}},
			`CN=alice,O=Example\, Inc.,C=US`},
		{pkix.RDNSequence{{atv(oidDC, "org")}, {atv(oidDC, "example")}, {atv(oidOU, "ops"), atv(oidCN, " bob+1 ")}, {atv(oidEmail, "bob@example.org")}},
			`emailAddress=bob@example.org,CN=\ bob\+1\ +OU=ops,DC=example,DC=org`},
		{pkix.RDNSequence{{atv(oidCN, `#José <x>;"y"\`)}, {atv(asn1.ObjectIdentifier{1, 2, 3, 4}, "odd")}},
			`1.2.3.4=#13036F6464,CN=\#Jos\C3\A9 \<x\>\;\"y\"\\`},
	} {
		got, err := DN(certWith(t, tc.rdns))
		if err != nil || got != tc.want {
			t.Errorf("DN = %q, %v; want %q", got, err, tc.want)
		}
	}
}

// TestDecideDN: with clientname=DN the certificate's distinguished name is
// the name a cert line (or clientcert=verify-full) checks, directly or
// through a map; without it, the common name.
func TestDecideDN(t *testing.T) {
	rs := parse(t, `hostssl all alice all cert clientname=DN map=dns
hostssl all "CN=carol,O=Example" all cert clientname=DN
hostssl all "CN=dave,O=Example" all md5 clientcert=verify-full clientname=DN
hostssl all erin all cert clientname=CN
`)
	ids, err := ParseIdent(strings.NewReader(`dns "/^CN=([a-z]+),O=Example$" \1`+"\n"), "pg_ident.conf")
	if err != nil {
		t.Fatal(err)
	}
	rs.Idents = ids
	ip := netip.MustParseAddr("10.0.0.1")
	subject := func(cn, o string) *x509.Certificate {
		return certWith(t, pkix.RDNSequence{{atv(oidO, o)}, {atv(oidCN, cn)}})
	}
	for _, tc := range []struct {
		user   string
		cert   *x509.Certificate
		want   Method
		refuse string
	}{
		{"alice", subject("alice", "Example"), Trust, ""},
		{"alice", subject("alice", "Other"), Reject, `certificate authentication failed for user "alice"`},
		{"alice", subject("bob", "Example"), Reject, `certificate authentication failed for user "alice"`},
		{"CN=carol,O=Example", subject("carol", "Example"), Trust, ""},
		{"CN=carol,O=Example", subject("carol", "Other"), Reject, `certificate authentication failed for user "CN=carol,O=Example"`},
		{"CN=dave,O=Example", subject("dave", "Example"), MD5, ""},
		{"CN=dave,O=Example", subject("dave", "Other"), Reject, `certificate authentication failed for user "CN=dave,O=Example"`},
		{"erin", subject("erin", "Anything"), Trust, ""},
	} {
		m, why := rs.Decide(Client{"db", tc.user, ip, true}, tc.cert, nil)
		if m != tc.want || why != tc.refuse {
			t.Errorf("%s with %s: %s %q, want %s %q", tc.user, tc.cert.Subject, m, why, tc.want, tc.refuse)
		}
	}
}
