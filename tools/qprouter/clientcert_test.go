package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// issue writes name.pem and name.key, a certificate for cn signed by the
// CA (ca, caKey), or self-signed when ca is nil; it returns them for
// signing others.
func issue(t *testing.T, dir, name, cn string, isCA bool, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	if isCA {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign
	}
	parent, signer := tmpl, key
	if ca != nil {
		parent, signer = ca, caKey
	}
	der := writeSigned(t, filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key"), tmpl, parent, key, signer)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// certRouter starts qprouter in transaction mode with dir's server
// certificate (cert.pem, key.pem) and CA (ca.pem) and extra flags, and
// returns its port.
func certRouter(t *testing.T, serverURL, dir string, extra ...string) (int, func()) {
	t.Helper()
	args := append([]string{"--pool-mode", "transaction", "--tls-cert", filepath.Join(dir, "cert.pem"),
		"--tls-key", filepath.Join(dir, "key.pem"), "--tls-ca-file", filepath.Join(dir, "ca.pem")}, extra...)
	url, stop := startRouter(t, serverURL, args...)
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	return int(cfg.Port), stop
}

// certArgs are the connection parameters that present dir's name.pem and
// name.key.
func certArgs(dir, name string) string {
	return fmt.Sprintf("sslcert=%s sslkey=%s", filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key"))
}

// TestClientCertificates runs qprouter with --tls-ca-file and an HBA cert
// line: a client certificate from that CA naming the user logs in without
// a password; one naming someone else, none, or one from another CA does
// not, each with PostgreSQL's words (or a failed TLS handshake). Lines
// with clientcert=verify-ca want a certificate of the CA whatever its
// name, with verify-full one naming the user; a cert line with map= takes
// the names its ident map gives the certificate's (its common name, or
// with clientname=DN its distinguished name).
func TestClientCertificates(t *testing.T) {
	c := pgtest.Shared(t)
	serverExec(t, c.URL(), "DROP ROLE IF EXISTS cert_user, cc_ca, cc_full, cc_map, cc_dn", "CREATE ROLE cert_user LOGIN", "CREATE ROLE cc_ca LOGIN",
		"CREATE ROLE cc_full LOGIN", "CREATE ROLE cc_map LOGIN", "CREATE ROLE cc_dn LOGIN")
	dir := t.TempDir()
	writeCert(t, dir, 1) // the server's
	ca, caKey := issue(t, dir, "ca", "test CA", true, nil, nil)
	issue(t, dir, "good", "cert_user", false, ca, caKey)
	issue(t, dir, "other", "someone_else", false, ca, caKey)
	issue(t, dir, "stranger", "cert_user", false, nil, nil) // self-signed: no CA vouches for it
	issue(t, dir, "full", "cc_full", false, ca, caKey)
	rules := filepath.Join(dir, "pg_hba.conf")
	write(t, rules, "hostssl all cert_user all cert\nhost all postgres all trust\n"+
		"hostssl all cc_ca all trust clientcert=verify-ca\nhostssl all cc_full all trust clientcert=verify-full\n"+
		"hostssl all cc_map all cert map=certs\nhostssl all cc_dn all cert clientname=DN map=dns\n")
	idents := filepath.Join(dir, "pg_ident.conf")
	write(t, idents, "certs /^(cert)_user$ cc_map\ndns \"/^CN=(cc_.*)$\" \\1\n")
	port, stop := certRouter(t, c.URL(), dir, "--auth-hba-file", rules, "--auth-ident-file", idents)
	defer stop()
	try := func(extra string) error {
		return loginAs(fmt.Sprintf("host=127.0.0.1 port=%d user=cert_user dbname=postgres sslmode=require %s", port, extra), "cert_user")
	}
	withCert := func(name string) string { return certArgs(dir, name) }
	if err := try(withCert("good")); err != nil {
		t.Errorf("the CA's certificate for cert_user: %v", err)
	}
	refused := func(err error, message string) {
		t.Helper()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "28000" || pe.Message != message {
			t.Errorf("got %v, want 28000 %q", err, message)
		}
	}
	refused(try(withCert("other")), `certificate authentication failed for user "cert_user"`)
	refused(try(""), "connection requires a valid client certificate")
	if err := try(withCert("stranger")); err == nil {
		t.Error("a certificate no configured CA signed: logged in")
	}

	as := func(user, extra string) error {
		return loginAs(fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=postgres sslmode=require %s", port, user, extra), user)
	}
	if err := as("cc_ca", withCert("good")); err != nil {
		t.Errorf("clientcert=verify-ca, the CA's certificate for another name: %v", err)
	}
	refused(as("cc_ca", ""), "connection requires a valid client certificate")
	if err := as("cc_full", withCert("full")); err != nil {
		t.Errorf("clientcert=verify-full, the CA's certificate for the user: %v", err)
	}
	refused(as("cc_full", withCert("good")), `certificate authentication failed for user "cc_full"`)
	refused(as("cc_full", ""), "connection requires a valid client certificate")
	if err := as("cc_map", withCert("good")); err != nil {
		t.Errorf("cert with map=, a certificate the map gives cc_map: %v", err)
	}
	refused(as("cc_map", withCert("full")), `certificate authentication failed for user "cc_map"`)
	issue(t, dir, "dn", "cc_dn", false, ca, caKey)
	if err := as("cc_dn", withCert("dn")); err != nil {
		t.Errorf("cert with clientname=DN, a certificate whose DN the map gives cc_dn: %v", err)
	}
	refused(as("cc_dn", withCert("good")), `certificate authentication failed for user "cc_dn"`)
}

// TestRequireClientCert runs qprouter with --require-client-cert and no
// other authentication: only a TLS client whose certificate the CA file
// verifies gets in, whatever name the certificate bears.
func TestRequireClientCert(t *testing.T) {
	c := pgtest.Shared(t)
	dir := t.TempDir()
	writeCert(t, dir, 1)
	ca, caKey := issue(t, dir, "ca", "test CA", true, nil, nil)
	issue(t, dir, "good", "someone_else", false, ca, caKey)
	issue(t, dir, "stranger", "postgres", false, nil, nil)
	port, stop := certRouter(t, c.URL(), dir, "--require-client-cert")
	defer stop()
	try := func(extra string) error {
		return loginAs(fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres %s", port, extra), "postgres")
	}
	withCert := func(name string) string { return "sslmode=require " + certArgs(dir, name) }
	if err := try(withCert("good")); err != nil {
		t.Errorf("a certificate the CA signed: %v", err)
	}
	if err := try("sslmode=require"); err == nil {
		t.Error("TLS without a certificate: logged in")
	}
	if err := try(withCert("stranger")); err == nil {
		t.Error("a certificate no configured CA signed: logged in")
	}
	var pe *pgconn.PgError
	if err := try("sslmode=disable"); !errors.As(err, &pe) || pe.Code != "28000" {
		t.Errorf("without TLS: %v, want 28000", err)
	}
}

// TestAuthTypeCert runs qprouter with --auth-type cert (PgBouncer's
// auth_type = cert) and no auth file: a TLS client whose certificate the
// CA file verifies logs in as the certificate's common name, without a
// password; another name, no certificate or no TLS is refused as
// PostgreSQL refuses it. The same from a pgbouncer.ini.
func TestAuthTypeCert(t *testing.T) {
	c := pgtest.Shared(t)
	serverExec(t, c.URL(), "DROP ROLE IF EXISTS at_cert", "CREATE ROLE at_cert LOGIN")
	dir := t.TempDir()
	writeCert(t, dir, 1)
	ca, caKey := issue(t, dir, "ca", "test CA", true, nil, nil)
	issue(t, dir, "good", "at_cert", false, ca, caKey)
	port, stop := certRouter(t, c.URL(), dir, "--auth-type", "cert")
	defer stop()
	as := func(user, extra string) error {
		return loginAs(fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=postgres %s", port, user, extra), user)
	}
	refused := func(err error, message string) {
		t.Helper()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "28000" || !strings.HasPrefix(pe.Message, message) {
			t.Errorf("got %v, want 28000 %q", err, message)
		}
	}
	if err := as("at_cert", "sslmode=require "+certArgs(dir, "good")); err != nil {
		t.Errorf("the CA's certificate for at_cert: %v", err)
	}
	refused(as("postgres", "sslmode=require "+certArgs(dir, "good")), `certificate authentication failed for user "postgres"`)
	refused(as("at_cert", "sslmode=require"), "connection requires a valid client certificate")
	refused(as("at_cert", "sslmode=disable"), `no pg_hba.conf entry for host "127.0.0.1", user "at_cert", database "postgres", no encryption`)

	var errb bytes.Buffer
	if code := run(context.Background(), []string{"--server-url", c.URL(), "--auth-type", "cert"}, io.Discard, &errb, nil, nil); code != exitUsage ||
		!strings.Contains(errb.String(), "--auth-type cert needs --tls-ca-file") {
		t.Errorf("without a CA file: exit %d, %s", code, errb.String())
	}
	ini := filepath.Join(dir, "pgbouncer.ini")
	write(t, ini, fmt.Sprintf("[databases]\n* = host=127.0.0.1 port=%d\n[pgbouncer]\nauth_type = cert\nclient_tls_sslmode = verify-ca\n"+
		"client_tls_cert_file = %s\nclient_tls_key_file = %s\nclient_tls_ca_file = %s\n", c.Port,
		filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "ca.pem")))
	url, stopINI := startRouterWith(t, "--pgbouncer-ini", ini)
	defer stopINI()
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	port = int(cfg.Port)
	if err := as("at_cert", "sslmode=require "+certArgs(dir, "good")); err != nil {
		t.Errorf("auth_type = cert in pgbouncer.ini, the CA's certificate for at_cert: %v", err)
	}
	refused(as("postgres", "sslmode=require "+certArgs(dir, "good")), `certificate authentication failed for user "postgres"`)
}

// TestCAReload: SIGHUP reads --tls-ca-file again. Once the file holds
// another CA, that CA's certificates get in and the first one's do not;
// a file with no certificate in it fails the reload, naming the file, and
// the CAs in force stay.
func TestCAReload(t *testing.T) {
	c := pgtest.Shared(t)
	dir := t.TempDir()
	writeCert(t, dir, 1)
	ca1, key1 := issue(t, dir, "ca1", "first CA", true, nil, nil)
	ca2, key2 := issue(t, dir, "ca2", "second CA", true, nil, nil)
	issue(t, dir, "one", "postgres", false, ca1, key1)
	issue(t, dir, "two", "postgres", false, ca2, key2)
	caFile := filepath.Join(dir, "ca.pem")
	useCA := func(name string) {
		b, err := os.ReadFile(filepath.Join(dir, name+".pem"))
		if err != nil {
			t.Fatal(err)
		}
		write(t, caFile, string(b))
	}
	useCA("ca1")
	addr, reload, stop := startWithHUP(t, "--server-url", c.URL(), "--require-client-cert", "--tls-cert", filepath.Join(dir, "cert.pem"),
		"--tls-key", filepath.Join(dir, "key.pem"), "--tls-ca-file", caFile)
	defer stop()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	try := func(name string) error {
		return loginAs(fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres sslmode=require %s", host, port, certArgs(dir, name)), "postgres")
	}
	check := func(when string, oneIn, twoIn bool) {
		t.Helper()
		if err := try("one"); (err == nil) != oneIn {
			t.Errorf("%s: the first CA's certificate: %v, want logged in %v", when, err, oneIn)
		}
		if err := try("two"); (err == nil) != twoIn {
			t.Errorf("%s: the second CA's certificate: %v, want logged in %v", when, err, twoIn)
		}
	}
	check("at the start", true, false)
	useCA("ca2")
	reload("reloaded")
	check("after a reload with the second CA", false, true)
	write(t, caFile, "not a certificate\n")
	if logs := reload("reload failed"); !strings.Contains(logs, "no PEM certificate") {
		t.Errorf("the failed reload does not say what failed:\n%s", logs)
	}
	check("after a failed reload", false, true)
}
