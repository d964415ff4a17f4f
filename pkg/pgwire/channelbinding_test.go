package pgwire

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"math/big"
	"strings"
	"testing"
	"time"
)

// TestClientFirstChannelBinding: the gs2 header against the mechanism the
// client chose and what the server offered, as PostgreSQL checks it.
func TestClientFirstChannelBinding(t *testing.T) {
	const bare = "n=,r=abcdef"
	for _, tc := range []struct {
		msg            string
		plus, offered  bool
		header, refuse string
	}{
		{"n,," + bare, false, false, "n,,", ""},
		{"n,," + bare, false, true, "n,,", ""},
		{"y,," + bare, false, false, "y,,", ""},
		{"y,," + bare, false, true, "", "SCRAM channel binding negotiation error"},
		{"p=tls-server-end-point,," + bare, true, true, "p=tls-server-end-point,,", ""},
		{"p=tls-server-end-point,," + bare, false, true, "", "selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data"},
		{"n,," + bare, true, true, "", "selected SCRAM-SHA-256-PLUS, but the SCRAM message does not include channel binding data"},
		{"p=tls-unique,," + bare, true, true, "", `unsupported SCRAM channel-binding type "tls-unique"`},
		{"p=tls-server-end-point", true, true, "", "unexpected end of channel-binding flag"},
	} {
		cf, e := parseClientFirst(tc.msg, tc.plus, tc.offered)
		switch {
		case tc.refuse == "" && (e != nil || cf.gs2Header != tc.header || cf.bare != bare):
			t.Errorf("%q plus=%v offered=%v: header %q bare %q, %v", tc.msg, tc.plus, tc.offered, cf.gs2Header, cf.bare, e)
		case tc.refuse != "" && (e == nil || !strings.Contains(e.Message, tc.refuse) || e.Code != CodeProtocolViolation):
			t.Errorf("%q plus=%v offered=%v: %v, want a refusal with %q", tc.msg, tc.plus, tc.offered, e, tc.refuse)
		}
	}
}

// TestClientFinalChannelBinding: the client-final-message's c= must be the
// gs2 header followed by this connection's channel binding data.
func TestClientFinalChannelBinding(t *testing.T) {
	header := "p=tls-server-end-point,,"
	ours, theirs := []byte("0123456789abcdef0123456789abcdef"), []byte("fedcba9876543210fedcba9876543210")
	proof := base64.StdEncoding.EncodeToString(make([]byte, sha256.Size))
	final := func(cb []byte) string {
		return "c=" + base64.StdEncoding.EncodeToString(append([]byte(header), cb...)) + ",r=nonce,p=" + proof
	}
	want := append([]byte(header), ours...)
	if _, e := parseClientFinal(final(ours), want, "nonce"); e != nil {
		t.Errorf("matching binding refused: %v", e)
	}
	for _, cb := range [][]byte{theirs, nil} {
		if _, e := parseClientFinal(final(cb), want, "nonce"); e == nil || e.Code != CodeInvalidAuthorization || e.Message != "SCRAM channel binding check failed" {
			t.Errorf("binding %q: %v, want the check to fail with 28000", cb, e)
		}
	}
	// Without PLUS, c= must be the header alone (PostgreSQL: 08P01).
	plain := "c=" + base64.StdEncoding.EncodeToString([]byte("n,,"+string(ours))) + ",r=nonce,p=" + proof
	if _, e := parseClientFinal(plain, []byte("n,,"), "nonce"); e == nil || e.Code != CodeProtocolViolation ||
		e.Message != "unexpected SCRAM channel-binding attribute in client-final-message" {
		t.Errorf("binding data without PLUS: %v", e)
	}
}

// TestEndPoint: RFC 5929's hash follows the certificate's signature
// algorithm; an Ed25519 certificate has none, so no PLUS is offered.
func TestEndPoint(t *testing.T) {
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "x"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	selfSigned := func(pub, priv any) *tls.Certificate {
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
		if err != nil {
			t.Fatal(err)
		}
		return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv}
	}
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	edPub, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	c256, c384, ced := selfSigned(&p256.PublicKey, p256), selfSigned(&p384.PublicKey, p384), selfSigned(edPub, edPriv)
	if got, want := endPoint(c256), sha256.Sum256(c256.Certificate[0]); string(got) != string(want[:]) {
		t.Errorf("ECDSA P-256 (SHA-256): %x, want %x", got, want)
	}
	if got, want := endPoint(c384), sha512.Sum384(c384.Certificate[0]); string(got) != string(want[:]) {
		t.Errorf("ECDSA P-384 (SHA-384): %x, want %x", got, want)
	}
	if got := endPoint(ced); got != nil {
		t.Errorf("Ed25519: %x, want none", got)
	}
	if endPoint(nil) != nil {
		t.Error("no certificate: binding data")
	}
}

// TestChannelBindingWithGetCertificate: a certificate picked per
// handshake (as a reloadable one is) is the one bound to.
func TestChannelBindingWithGetCertificate(t *testing.T) {
	tlsCfg, caFile := testTLS(t)
	cert := tlsCfg.Certificates[0]
	dynamic := &tls.Config{MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &cert, nil }}
	s := startServer(t, &ServerConfig{TLS: dynamic, Credentials: users(map[string]Credential{"alice": {Method: AuthSCRAM, Password: SCRAMVerifier("s3cret")}})})
	got, err := connect(t, "postgres://alice:s3cret@"+s.addr+"/shop?sslmode=verify-full&channel_binding=require&sslrootcert="+caFile)
	if err != nil || got != "hello" {
		t.Fatalf("%q, %v", got, err)
	}
	if r := s.next(t); r.err != nil {
		t.Fatal(r.err)
	}
}
