// A certificate's subject as the distinguished name PostgreSQL matches for clientname=DN.

package hba

import (
	"bytes"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"strings"
)

// DN is the certificate's subject in RFC 2253 form as PostgreSQL prints
// it (OpenSSL's X509_NAME_print_ex with XN_FLAG_RFC2253): the last
// attribute first, "," between RDNs and "+" inside one, OpenSSL's short
// names (CN, OU, O, L, ST, C, emailAddress, DC, UID, ...), an unnamed type
// as its dotted OID with the value's DER in hex after "#", and special
// characters, control characters and every byte of a non-ASCII character
// escaped with a backslash. Parsed from the raw subject, so the order is
// the certificate's own.
func DN(cert *x509.Certificate) (string, error) {
	var rdns pkix.RDNSequence
	if rest, err := asn1.Unmarshal(cert.RawSubject, &rdns); err != nil || len(rest) > 0 {
		return "", fmt.Errorf("certificate subject: %v", err)
	}
	var b strings.Builder
	for i := len(rdns) - 1; i >= 0; i-- {
		set := rdns[i]
		for j := len(set) - 1; j >= 0; j-- {
			switch {
			case j < len(set)-1:
				b.WriteByte('+')
			case b.Len() > 0:
				b.WriteByte(',')
			}
			atv := set[j]
			name, known := shortNames[atv.Type.String()]
			s, isString := atv.Value.(string)
			if !known {
				name = atv.Type.String()
			}
			b.WriteString(name)
			b.WriteByte('=')
			if !known || !isString {
				der, err := asn1.Marshal(atv.Value)
				if err != nil {
					return "", fmt.Errorf("certificate subject %s: %v", name, err)
				}
				b.WriteByte('#')
				b.WriteString(strings.ToUpper(hex.EncodeToString(der)))
				continue
			}
			escapeRFC2253(&b, s)
		}
	}
	return b.String(), nil
}

// CommonName is the certificate's common name as PostgreSQL takes it
// (X509_NAME_get_text_by_NID): the bytes of the subject's first CN
// attribute as the certificate holds them, whatever its string type (a
// T61String's Latin-1 stays Latin-1, a BMPString's UCS-2 has NULs),
// where crypto/x509's Subject.CommonName is the last one, converted to
// UTF-8. So a subject "CN=alice, CN=postgres" names alice, as on the
// server. "" (which Decide refuses before any map) for none, a subject
// that does not parse, or a name with a NUL in it, which PostgreSQL
// refuses.
func CommonName(cert *x509.Certificate) string {
	if len(cert.RawSubject) == 0 {
		return cert.Subject.CommonName // built in Go, not parsed: one CN at most
	}
	var rdns []rawRDNSET
	if rest, err := asn1.Unmarshal(cert.RawSubject, &rdns); err != nil || len(rest) > 0 {
		return ""
	}
	for _, set := range rdns {
		for _, atv := range set {
			if !atv.Type.Equal(oidCommonName) {
				continue
			}
			b := atv.Value.Bytes
			if atv.Value.Class != asn1.ClassUniversal || atv.Value.IsCompound || bytes.IndexByte(b, 0) >= 0 {
				return ""
			}
			return string(b)
		}
	}
	return ""
}

// rawRDNSET is one relative distinguished name with its values undecoded
// (encoding/asn1 reads a slice type named ...SET as a SET OF).
type rawRDNSET []struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

var oidCommonName = asn1.ObjectIdentifier{2, 5, 4, 3}

// escapeRFC2253 writes s with RFC 2253's escapes as OpenSSL makes them.
func escapeRFC2253(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(b, "\\%02X", c)
		case strings.IndexByte(`,+"\<>;`, c) >= 0,
			c == '#' && i == 0,
			c == ' ' && (i == 0 || i == len(s)-1):
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
}

// shortNames are OpenSSL's short names of the attribute types it names.
var shortNames = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.4":                    "SN",
	"2.5.4.5":                    "serialNumber",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.9":                    "street",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.12":                   "title",
	"2.5.4.17":                   "postalCode",
	"2.5.4.42":                   "GN",
	"2.5.4.43":                   "initials",
	"2.5.4.44":                   "generationQualifier",
	"2.5.4.46":                   "dnQualifier",
	"2.5.4.65":                   "pseudonym",
	"1.2.840.113549.1.9.1":       "emailAddress",
	"0.9.2342.19200300.100.1.1":  "UID",
	"0.9.2342.19200300.100.1.25": "DC",
}
