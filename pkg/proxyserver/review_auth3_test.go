// Third review of client authentication and TLS (pkg/hba, pkg/pgwire and
// their wiring here), differential against PostgreSQL 15 itself.

package proxyserver

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// zz3PKI is a CA, a server certificate it signed, and the directory their
// files are in (readable by the account that runs PostgreSQL).
type zz3PKI struct {
	dir                   string
	ca                    *x509.Certificate
	caKey                 *ecdsa.PrivateKey
	caFile                string
	serverCert, serverKey string
}

var zz3Serial int64 = 100

// zz3NewPKI makes a CA and a server certificate for 127.0.0.1 in a fresh
// directory that the postgres account may read.
func zz3NewPKI(t *testing.T) *zz3PKI {
	t.Helper()
	dir, err := os.MkdirTemp("", "zz3pki")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := &zz3PKI{dir: dir}
	p.caKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "zz3 test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &p.caKey.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	p.ca, _ = x509.ParseCertificate(der)
	p.caFile = p.write(t, "ca.crt", "CERTIFICATE", der)
	subj, _ := asn1.Marshal(pkix.Name{CommonName: "localhost"}.ToRDNSequence())
	p.serverCert, p.serverKey = p.issue(t, "server", subj, x509.ExtKeyUsageServerAuth)
	return p
}

// write puts a PEM block into the directory, owned by the postgres account
// (PostgreSQL refuses a key file others may read).
func (p *zz3PKI) write(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	zz3Give(t, path)
	return path
}

// zz3Give hands path to the account that runs PostgreSQL when we are root.
func zz3Give(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		u, err = user.Lookup("nobody")
	}
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(path, uid, gid); err != nil {
		t.Fatal(err)
	}
}

// issue signs a certificate whose subject is the DER rawSubject and
// returns its certificate and key files.
func (p *zz3PKI) issue(t *testing.T, name string, rawSubject []byte, eku x509.ExtKeyUsage) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	zz3Serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(zz3Serial), RawSubject: rawSubject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{eku}}
	if eku == x509.ExtKeyUsageServerAuth {
		tmpl.DNSNames, tmpl.IPAddresses = []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return p.write(t, name+".crt", "CERTIFICATE", der), p.write(t, name+".key", "EC PRIVATE KEY", kder)
}

// zz3SSLCluster starts a PostgreSQL 15 cluster with TLS on, the CA of p
// verifying client certificates, and hba as its pg_hba.conf (ident as
// its pg_ident.conf when not empty).
func zz3SSLCluster(t *testing.T, p *zz3PKI, hba, ident string) *pgtest.Cluster {
	t.Helper()
	hbaFile := filepath.Join(p.dir, "pg_hba.conf")
	if err := os.WriteFile(hbaFile, []byte(hba), 0o644); err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{"ssl": "on", "ssl_cert_file": p.serverCert, "ssl_key_file": p.serverKey,
		"ssl_ca_file": p.caFile, "hba_file": hbaFile}
	if ident != "" {
		identFile := filepath.Join(p.dir, "pg_ident.conf")
		if err := os.WriteFile(identFile, []byte(ident), 0o644); err != nil {
			t.Fatal(err)
		}
		settings["ident_file"] = identFile
	}
	return pgtest.Start(t, pgtest.Options{Settings: settings})
}

// zz3Login logs in over TLS as user with the client certificate and
// returns nil when a query ran.
func zz3Login(addr, user, certFile, keyFile string) error {
	url := fmt.Sprintf("postgres://%s@%s/postgres?sslmode=require&sslcert=%s&sslkey=%s&connect_timeout=10",
		user, addr, certFile, keyFile)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer cn.Close(context.Background())
	var one int
	return cn.QueryRow(ctx, "select 1").Scan(&one)
}

// zz3Proxy serves a proxy with TLS, p's CA and hba (and ident), in front
// of the shared trust cluster.
func zz3Proxy(t *testing.T, p *zz3PKI, hba, ident string) string {
	t.Helper()
	cl := pgtest.Shared(t)
	dir := t.TempDir()
	c := clusterConfig(cl, "session")
	c.TLSCert, c.TLSKey, c.TLSCAFile = p.serverCert, p.serverKey, p.caFile
	c.AuthHBAFile = filepath.Join(dir, "hba.conf")
	if err := os.WriteFile(c.AuthHBAFile, []byte(hba), 0o600); err != nil {
		t.Fatal(err)
	}
	if ident != "" {
		c.AuthIdentFile = filepath.Join(dir, "ident.conf")
		if err := os.WriteFile(c.AuthIdentFile, []byte(ident), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, addr := serveForTest(t, Options{Config: c})
	return addr
}

// zz3Roles creates login roles on the shared cluster (the proxy's server)
// and on cl.
func zz3Roles(t *testing.T, cl *pgtest.Cluster, roles ...string) {
	t.Helper()
	for _, url := range []string{pgtest.Shared(t).URL(), cl.SocketURL()} {
		for _, r := range roles {
			execForTest(t, url, fmt.Sprintf(`DO $$BEGIN CREATE ROLE %q LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END$$`, r))
		}
	}
}

// rawSubject is the DER of a subject with one CN attribute per RDN, in
// order.
func zz3Subject(t *testing.T, cns ...string) []byte {
	t.Helper()
	var rdns pkix.RDNSequence
	for _, cn := range cns {
		rdns = append(rdns, pkix.RelativeDistinguishedNameSET{{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: cn}})
	}
	der, err := asn1.Marshal(rdns)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// A client certificate whose subject holds two common names
// (CN=zz3_alice, then CN=postgres). PostgreSQL 15 takes the FIRST one as
// the certificate's name (be_tls_open_server: X509_NAME_get_text_by_NID,
// which returns the first CN entry), so with "hostssl all all ... cert"
// the certificate logs in as zz3_alice and is refused as postgres.
// qprouter reads x509.Certificate.Subject.CommonName, which
// crypto/x509 fills with the LAST CN, so the same certificate is refused
// as zz3_alice and logs in as the superuser postgres: the cert method
// (and clientcert=verify-full, and the name a map= sees) authenticates a
// different user than the server it fronts would. Any CA that copies a
// requester's subject lets a user who may only be zz3_alice on the server
// become postgres through the proxy.
func TestAuth3ReviewCertDuplicateCommonName(t *testing.T) {
	p := zz3NewPKI(t)
	hba := "local all all trust\nhostssl all all 127.0.0.1/32 cert\n"
	pg := zz3SSLCluster(t, p, hba, "")
	zz3Roles(t, pg, "zz3_alice")
	proxy := zz3Proxy(t, p, "hostssl all all 127.0.0.1/32 cert\n", "")

	cert, key := p.issue(t, "twocn", zz3Subject(t, "zz3_alice", "postgres"), x509.ExtKeyUsageClientAuth)
	pgAddr := fmt.Sprintf("127.0.0.1:%d", pg.Port)
	for _, u := range []string{"zz3_alice", "postgres"} {
		pgErr := zz3Login(pgAddr, u, cert, key)
		pxErr := zz3Login(proxy, u, cert, key)
		if (pgErr == nil) != (pxErr == nil) {
			t.Errorf("certificate CN=zz3_alice,CN=postgres as user %s: PostgreSQL 15: %v; qprouter: %v", u, zz3Outcome(pgErr), zz3Outcome(pxErr))
		}
	}
}

func zz3Outcome(err error) string {
	if err == nil {
		return "logged in"
	}
	return "refused (" + err.Error() + ")"
}

// zz3LoginPassword logs in without TLS as user with password and returns
// nil when a query ran.
func zz3LoginPassword(addr, user, password string) error {
	cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://%s@%s/postgres?sslmode=disable&connect_timeout=10", user, addr))
	if err != nil {
		return err
	}
	cfg.Password = password
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer cn.Close(context.Background())
	var one int
	return cn.QueryRow(ctx, "select 1").Scan(&one)
}

// The docs promise passwords are prepared "as PostgreSQL's pg_saslprep
// and libpq prepare them ... so a verifier PostgreSQL stored for a
// non-ASCII password works with the cleartext method". pg_saslprep
// (src/common/saslprep.c, PG 15) differs from xdg-go/stringprep's
// SASLprep in two ways normalizePassword inherits: it refuses (and so
// falls back to the raw bytes) a password that step 1 maps to nothing
// ("don't allow empty password"), where stringprep returns "" and
// qprouter hashes the EMPTY password; and it runs the prohibited and bidi
// checks on the mapped input, before NFKC, where stringprep checks the
// normalized output (U+FE70, an Arabic isolated form that is RandALCat,
// becomes U+0020 U+064B). Differential: PostgreSQL 15 with a "password"
// line, the same roles' pg_authid verifiers in qprouter's auth file with
// --auth-type plain, and the same cleartext password sent to both.
func TestAuth3ReviewSASLprepAsPostgres(t *testing.T) {
	p := zz3NewPKI(t) // only for a directory PostgreSQL can read
	pg := zz3SSLCluster(t, p, "local all all trust\nhost all all 127.0.0.1/32 password\n", "")
	passwords := map[string]string{
		"zz3_softhyphen": "\u00ad",       // mapped to nothing: pg_saslprep refuses, raw bytes
		"zz3_arabic":     "\u0628\ufe70", // bidi fine before NFKC, broken after it
	}
	var users bytes.Buffer
	for role, pw := range passwords {
		zz3Roles(t, pg, role)
		execForTest(t, pg.SocketURL(), "SET password_encryption = 'scram-sha-256'",
			fmt.Sprintf("ALTER ROLE %s PASSWORD '%s'", role, pw))
		var verifier string
		cn := pgxConnect(t, pg.SocketURL())
		if err := cn.QueryRow(context.Background(), "SELECT rolpassword FROM pg_authid WHERE rolname = $1", role).Scan(&verifier); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&users, "%q %q\n", role, verifier)
	}
	cl := pgtest.Shared(t)
	c := clusterConfig(cl, "session")
	c.AuthType = "plain"
	c.AuthFile = filepath.Join(t.TempDir(), "users.txt")
	if err := os.WriteFile(c.AuthFile, users.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	_, proxy := serveForTest(t, Options{Config: c})
	pgAddr := fmt.Sprintf("127.0.0.1:%d", pg.Port)
	for role, pw := range passwords {
		pgErr := zz3LoginPassword(pgAddr, role, pw)
		pxErr := zz3LoginPassword(proxy, role, pw)
		if (pgErr == nil) != (pxErr == nil) {
			t.Errorf("%s, cleartext password %+q against PostgreSQL's own verifier: PostgreSQL 15: %v; qprouter: %v", role, pw, zz3Outcome(pgErr), zz3Outcome(pxErr))
		}
	}
}
