// Review of 8f4f822 (hba: a certificate without a readable CN is refused
// before any map): asserts PostgreSQL 15's and docs/qprouter.md's answer.

package hba

import (
	"crypto/x509/pkix"
	"net/netip"
	"testing"
)

// PostgreSQL 15 (CheckCertAuth) writes "certificate authentication failed
// for user "app": client certificate contains no user name" to its server
// log only (ereport LOG); the client gets auth_failed's FATAL 28000
// "certificate authentication failed for user "app"" (checked with psql
// and a certificate whose subject is /O=Acme against PostgreSQL 15.18),
// and docs/qprouter.md promises that text for cert lines. noCertName
// sends the log line's detail to the client instead.
func TestDiff11ReviewCertWithoutCNRefusedInPostgresWords(t *testing.T) {
	rs := parse(t, "hostssl all all all cert\n")
	cert := certWith(t, pkix.RDNSequence{{atv(oidO, "Acme")}})
	m, why := rs.Decide(Client{"db", "app", netip.MustParseAddr("10.0.0.1"), true}, cert, nil)
	if want := `certificate authentication failed for user "app"`; m != Reject || why != want {
		t.Fatalf("certificate without a CN: %s %q; want reject %q, as PostgreSQL 15 tells the client", m, why, want)
	}
}
