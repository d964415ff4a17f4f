// Review of f1b8cca (hba: cert auth takes the first CN as PostgreSQL
// does): each test asserts the correct behaviour and fails on the code it
// was written against. certWith, atv and the oids are dn_test.go's.

package hba

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"net/netip"
	"strings"
	"testing"
	"unicode/utf16"
)

// PostgreSQL 15 (CheckCertAuth, auth.c) refuses a certificate that gives
// no user name before it looks at the map: "certificate authentication
// failed for user ...: client certificate contains no user name" when
// the subject has no CN or an empty one, and be_tls_open_server refuses
// a CN with a NUL in it ("SSL certificate's common name contains embedded
// null"). CommonName returns "" for all three, documented as "which no
// user or map matches", but Decide hands "" to the ident map, and a
// regex line that matches anything (certs /^.*$ app: every certificate
// our CA signed logs in as app) matches "": qprouter lets these
// certificates in as app.
func TestDiff9ReviewCertWithoutUserNameRefusedBeforeMap(t *testing.T) {
	rs := parse(t, "hostssl all all all cert map=certs\n")
	var err error
	rs.Idents, err = ParseIdent(strings.NewReader("certs /^.*$ app\n"), "pg_ident.conf")
	if err != nil {
		t.Fatal(err)
	}
	ip := netip.MustParseAddr("10.0.0.1")
	if m, why := rs.Decide(Client{"db", "app", ip, true}, certWith(t, pkix.RDNSequence{{atv(oidCN, "alice")}}), nil); m != Trust {
		t.Fatalf("a certificate naming alice: %s %q, want trust through the map", m, why)
	}
	for name, cert := range map[string]*x509.Certificate{
		"no CN":         certWith(t, pkix.RDNSequence{{atv(oidO, "Acme")}}),
		"an empty CN":   certWith(t, pkix.RDNSequence{{atv(oidO, "Acme")}, {atv(oidCN, "")}}),
		"a CN with NUL": certWith(t, pkix.RDNSequence{{atv(oidCN, "alice\x00.evil")}}),
	} {
		if m, why := rs.Decide(Client{"db", "app", ip, true}, cert, nil); m != Reject {
			t.Errorf("certificate with %s: %s %q; want it refused as PostgreSQL 15 refuses it (no user name), "+
				"not mapped to app by /^.*$", name, m, why)
		}
	}
}

// PostgreSQL takes the CN's bytes as they are in the certificate
// (X509_NAME_get_text_by_NID copies the ASN1_STRING's data, no
// conversion): a BMPString CN "app" is the UCS-2 bytes 00 61 00 70 00 70,
// which hold NULs, so the connection is refused ("SSL certificate's
// common name contains embedded null"); a T61String CN "Jos\xe9" is the
// byte 0xE9, not the UTF-8 of "José", so it names no user "José".
// CommonName (encoding/asn1) decodes both to UTF-8, and qprouter lets the
// first in as app and the second as José.
func TestDiff9ReviewCertCommonNameBytesAsPostgres(t *testing.T) {
	rs := parse(t, "hostssl all all all cert\n")
	ip := netip.MustParseAddr("10.0.0.1")
	bmp := func(s string) asn1.RawValue {
		var b []byte
		for _, u := range utf16.Encode([]rune(s)) {
			b = append(b, byte(u>>8), byte(u))
		}
		return asn1.RawValue{Tag: asn1.TagBMPString, Bytes: b}
	}
	for _, tc := range []struct {
		what, user string
		value      asn1.RawValue
	}{
		{"BMPString CN app", "app", bmp("app")},
		{"T61String CN Jos\\xe9", "Jos\u00e9", asn1.RawValue{Tag: asn1.TagT61String, Bytes: []byte("Jos\xe9")}},
	} {
		cert := certWith(t, pkix.RDNSequence{{pkix.AttributeTypeAndValue{Type: oidCN, Value: tc.value}}})
		if m, why := rs.Decide(Client{"db", tc.user, ip, true}, cert, nil); m != Reject {
			t.Errorf("%s as user %q: %s %q (CommonName %q); PostgreSQL 15 refuses it", tc.what, tc.user, m, why, CommonName(cert))
		}
	}
}
