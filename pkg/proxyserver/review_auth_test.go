// Review: qprouter's security layer (client authentication, auth query,
// TLS) against PostgreSQL 15 and PgBouncer 1.18.

package proxyserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// rvAuthCert writes a self-signed server certificate and key into dir.
func rvAuthCert(t *testing.T, dir string) (certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certPath, keyPath
}

// rvAuthConnect tries a login and closes the connection; nil when it
// logged in and ran a query.
func rvAuthConnect(url string) error {
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

// A proxy started with --auth-user and no auth file checks every
// client's password through the auth query. The docs promise that a
// reload which would leave no source of passwords is refused ("a lost key
// or an unset variable must not turn password checks off"), but only the
// auth_file case is guarded: a reload whose settings lost auth_user is
// applied, and from then on every client, with any password, is trusted.
func TestAuthReviewReloadDroppingAuthUserTrustsEveryone(t *testing.T) {
	cl := pgtest.Shared(t)
	c := valid()
	c.ServerURL = fmt.Sprintf("postgres://127.0.0.1:%d/postgres?sslmode=disable", cl.Port)
	c.AuthUser = "postgres" // the default auth query on pg_authid
	nc := c
	nc.AuthUser = "" // e.g. an unset environment variable in the config file
	s, addr := serveForTest(t, Options{Config: c, Load: func() (Config, error) { return nc, nil }})
	url := fmt.Sprintf("postgres://postgres:not-the-password@%s/postgres?sslmode=disable", addr)

	// postgres has no password on the test cluster: the auth query
	// returns NULL, so no password logs in.
	if err := rvAuthConnect(url); err == nil {
		t.Fatal("before the reload: a wrong password logged in through the auth query")
	}
	reloadErr := s.Reload()
	if err := rvAuthConnect(url); err == nil {
		t.Errorf("after a reload that dropped auth_user (reload error: %v), a client with a wrong password "+
			"logged in as superuser postgres: password checks were silently turned off; such a reload must be refused "+
			"as one dropping auth_file is", reloadErr)
	}
}

// --require-tls (PgBouncer's client_tls_sslmode = require, which
// --pgbouncer-ini maps onto it) refuses every Unix-socket client with
// "SSL required". PgBouncer 1.18 exempts Unix sockets ("require SSL
// except on unix socket", src/client.c), PostgreSQL has no TLS on Unix
// sockets, and libpq (and pgx) never ask for TLS there, so with
// --unix-socket-dir the socket serves nobody.
func TestAuthReviewRequireTLSRefusesUnixSocket(t *testing.T) {
	cl := pgtest.Shared(t)
	dir := t.TempDir()
	sock, err := os.MkdirTemp("", "zzauth")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	c := valid()
	c.ServerURL = fmt.Sprintf("postgres://127.0.0.1:%d/postgres?sslmode=disable", cl.Port)
	c.TLSCert, c.TLSKey = rvAuthCert(t, dir)
	c.RequireTLS = true
	c.UnixSocketDir, c.UnixSocketMode = sock, "0777"
	_, addr := serveForTest(t, Options{Config: c})
	_, port, _ := net.SplitHostPort(addr)
	if _, err := strconv.Atoi(port); err != nil {
		t.Fatal(err)
	}
	// TCP without TLS is refused, as asked.
	if err := rvAuthConnect(fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", addr)); err == nil {
		t.Fatal("plaintext TCP accepted with --require-tls")
	}
	// The Unix socket, where no client can use TLS, should still serve.
	if err := rvAuthConnect(fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres", sock, port)); err != nil {
		t.Errorf("Unix-socket client refused with --require-tls (PgBouncer and PostgreSQL never require TLS there): %v", err)
	}
}

// A database's own auth query ([databases] app = "...?auth_user=NAME",
// PgBouncer's per-database auth_user) is documented as a source of
// passwords "whether or not --auth-user is set", and host-based rules
// take their passwords "from --auth-file or the auth query". Yet a rules
// file with an md5 line, or --auth-type scram-sha-256, beside per-database
// auth users only is refused at start ("give --auth-file or --auth-user"),
// although its clients' passwords come from that auth query.
func TestAuthReviewPerDatabaseAuthUserIsASecretSource(t *testing.T) {
	dir := t.TempDir()
	hbaFile := filepath.Join(dir, "hba.conf")
	if err := os.WriteFile(hbaFile, []byte("host all all 127.0.0.1/32 scram-sha-256\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := valid()
	base.ServerURL = ""
	base.Databases = map[string]string{"app": "postgres://127.0.0.1:1/app?sslmode=disable&auth_user=postgres"}

	withHBA := base
	withHBA.AuthHBAFile = hbaFile
	if s, err := New(Options{Config: withHBA}); err != nil {
		t.Errorf("rules asking for passwords, with the database's auth query to take them from, refused: %v", err)
	} else {
		s.closeLoops()
	}
	withType := base
	withType.AuthType = "scram-sha-256"
	if s, err := New(Options{Config: withType}); err != nil {
		t.Errorf("--auth-type scram-sha-256 with the database's auth query to take passwords from, refused: %v", err)
	} else {
		s.closeLoops()
	}
}
