package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// writeCert writes a self-signed certificate for 127.0.0.1 with serial
// and its key to dir/cert.pem and dir/key.pem.
func writeCert(t *testing.T, dir string, serial int64) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	writeSigned(t, filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), tmpl, tmpl, key, key)
}

// writeSigned signs tmpl (for key) with parent's signer and writes the
// certificate and key as PEM to certPath and keyPath; it returns the
// certificate's DER.
func writeSigned(t *testing.T, certPath, keyPath string, tmpl, parent *x509.Certificate, key, signer *ecdsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write(t, certPath, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	write(t, keyPath, string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})))
	return der
}

// TestTLSReload: SIGHUP reads the certificate files again, so a renewed
// certificate serves new clients while connected ones keep going; a
// broken pair fails the reload and the current certificate stays. The
// clients log in with SCRAM and channel_binding=require, so the binding
// follows the certificate each handshake presented.
func TestTLSReload(t *testing.T) {
	c := pgtest.Shared(t)
	dir := t.TempDir()
	writeCert(t, dir, 1)
	users := filepath.Join(dir, "users.txt")
	write(t, users, `"postgres" "s3cret"`+"\n")
	addr, reload, stop := startWithHUP(t, "--server-url", c.URL(), "--require-tls", "--auth-file", users,
		"--tls-cert", filepath.Join(dir, "cert.pem"), "--tls-key", filepath.Join(dir, "key.pem"))
	defer stop()
	bg := context.Background()
	connect := func() (*pgx.Conn, int64) {
		t.Helper()
		conn, err := pgx.Connect(bg, "postgres://postgres:s3cret@"+addr+"/postgres?sslmode=require&channel_binding=require")
		if err != nil {
			t.Fatal(err)
		}
		tc, ok := conn.PgConn().Conn().(*tls.Conn)
		if !ok {
			t.Fatalf("not TLS: %T", conn.PgConn().Conn())
		}
		return conn, tc.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}

	old, serial := connect()
	defer old.Close(bg)
	if serial != 1 {
		t.Fatalf("first certificate: serial %d", serial)
	}
	writeCert(t, dir, 2)
	reload("reloaded")
	renewed, serial := connect()
	renewed.Close(bg)
	if serial != 2 {
		t.Errorf("after SIGHUP with a renewed certificate: serial %d, want 2", serial)
	}
	var n int
	if err := old.QueryRow(bg, "SELECT 7").Scan(&n); err != nil || n != 7 {
		t.Errorf("a client connected before the reload: %d, %v", n, err)
	}

	write(t, filepath.Join(dir, "key.pem"), "not a key\n")
	if logs := reload("reload failed"); !strings.Contains(logs, "tls: ") {
		t.Errorf("the failed reload does not say what failed:\n%s", logs)
	}
	again, serial := connect()
	again.Close(bg)
	if serial != 2 {
		t.Errorf("after a failed reload: serial %d, want the current certificate's 2", serial)
	}
}

// startWithHUP runs qprouter with args (and --listen on a free port) until
// stop, which fails the test unless it exits cleanly; reload sends it
// SIGHUP, waits for a new log line containing want and returns the log.
func startWithHUP(t *testing.T, args ...string) (addr string, reload func(want string) string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	codec := make(chan int, 1)
	hup := make(chan os.Signal, 1)
	logs := &syncBuf{}
	go func() {
		codec <- run(ctx, append([]string{"--listen", "127.0.0.1:0"}, args...), logs, logs, hup, func(a string) { addrc <- a })
	}()
	select {
	case addr = <-addrc:
	case code := <-codec:
		cancel()
		t.Fatalf("exited %d: %s", code, logs.String())
	}
	reload = func(want string) string {
		t.Helper()
		n := strings.Count(logs.String(), want)
		hup <- syscall.SIGHUP
		for deadline := time.Now().Add(10 * time.Second); strings.Count(logs.String(), want) == n; {
			if time.Now().After(deadline) {
				t.Fatalf("no %q after SIGHUP:\n%s", want, logs.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		return logs.String()
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if code := <-codec; code != exitOK {
			t.Errorf("exit %d:\n%s", code, logs.String())
		}
	}
	return addr, reload, stop
}

// TestChannelBindingWithCA: with --tls-ca-file (each handshake's settings
// then come from a callback, so that a reload can swap the CAs) SCRAM
// still offers channel binding and direct TLS still negotiates ALPN: a
// client with channel_binding=require logs in, over an SSLRequest and
// over direct TLS.
func TestChannelBindingWithCA(t *testing.T) {
	c := pgtest.Shared(t)
	dir := t.TempDir()
	writeCert(t, dir, 1)
	issue(t, dir, "ca", "test CA", true, nil, nil)
	users := filepath.Join(dir, "users.txt")
	write(t, users, `"postgres" "s3cret"`+"\n")
	url, stop := startRouter(t, c.URL(), "--auth-file", users, "--tls-cert", filepath.Join(dir, "cert.pem"),
		"--tls-key", filepath.Join(dir, "key.pem"), "--tls-ca-file", filepath.Join(dir, "ca.pem"))
	defer stop()
	base := strings.Replace(url, "postgres@", "postgres:s3cret@", 1)
	base = strings.Replace(base, "sslmode=disable", "sslmode=require&channel_binding=require", 1)
	for _, negotiation := range []string{"postgres", "direct"} {
		if err := loginAs(base+"&sslnegotiation="+negotiation, "postgres"); err != nil {
			t.Errorf("channel_binding=require, sslnegotiation=%s: %v", negotiation, err)
		}
	}
}
