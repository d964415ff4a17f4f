// Tests with a hand-driven client: startup packets, negotiation, limits and SCRAM edge cases.

package pgwire

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// raw is one client connection driven by hand, with Accept running on the
// server end.
type raw struct {
	t    *testing.T
	c    net.Conn
	fe   *pgproto3.Frontend
	done chan result
}

// dialRaw runs Accept(ctx, ..., cfg) on one loopback connection.
func dialRaw(t *testing.T, ctx context.Context, cfg *ServerConfig) *raw {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &raw{t: t, done: make(chan result, 1)}
	go func() {
		conn, err := ln.Accept()
		ln.Close() // only now: closing a listener resets connections not yet accepted
		if err != nil {
			r.done <- result{err: err}
			return
		}
		defer conn.Close()
		cl, st, err := Accept(ctx, conn, cfg)
		r.done <- result{cl, st, err}
	}()
	if r.c, err = net.Dial("tcp", ln.Addr().String()); err != nil {
		t.Fatal(err)
	}
	r.c.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { r.c.Close() })
	return r
}

func (r *raw) write(b []byte) {
	r.t.Helper()
	if _, err := r.c.Write(b); err != nil {
		r.t.Fatal(err)
	}
}

func (r *raw) readByte() byte {
	r.t.Helper()
	var b [1]byte
	if _, err := io.ReadFull(r.c, b[:]); err != nil {
		r.t.Fatal(err)
	}
	return b[0]
}

// startTLS upgrades the client end (after an 'S').
func (r *raw) startTLS(nextProtos ...string) {
	r.t.Helper()
	tc := tls.Client(r.c, &tls.Config{InsecureSkipVerify: true, NextProtos: nextProtos})
	if err := tc.Handshake(); err != nil {
		r.t.Fatal(err)
	}
	r.c = tc
}

func (r *raw) receive() pgproto3.BackendMessage {
	r.t.Helper()
	if r.fe == nil {
		r.fe = pgproto3.NewFrontend(r.c, r.c)
	}
	m, err := r.fe.Receive()
	if err != nil {
		r.t.Fatal(err)
	}
	return m
}

func (r *raw) send(msgs ...pgproto3.FrontendMessage) {
	r.t.Helper()
	var buf []byte
	for _, m := range msgs {
		var err error
		if buf, err = m.Encode(buf); err != nil {
			r.t.Fatal(err)
		}
	}
	r.write(buf)
}

// expectError receives an ErrorResponse with code and message.
func (r *raw) expectError(code, message string) {
	r.t.Helper()
	m := r.receive()
	e, ok := m.(*pgproto3.ErrorResponse)
	if !ok {
		r.t.Fatalf("got %T %+v, want an ErrorResponse", m, m)
	}
	if e.Code != code || e.Message != message || e.Severity != "FATAL" {
		r.t.Fatalf("got %s %s %q, want FATAL %s %q", e.Severity, e.Code, e.Message, code, message)
	}
}

func (r *raw) result() result {
	r.t.Helper()
	select {
	case res := <-r.done:
		return res
	case <-time.After(10 * time.Second):
		r.t.Fatal("Accept did not return")
		return result{}
	}
}

func packet(code uint32, rest ...byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(8+len(rest)))
	b = binary.BigEndian.AppendUint32(b, code)
	return append(b, rest...)
}

func params(kv ...string) []byte {
	var b []byte
	for _, s := range kv {
		b = append(append(b, s...), 0)
	}
	return append(b, 0)
}

var trustAll = &ServerConfig{Credentials: func(string, string) (Credential, error) { return Credential{Method: AuthTrust}, nil }}

func TestGSSENCThenSSLThenStartup(t *testing.T) {
	r := dialRaw(t, context.Background(), trustAll)
	r.write(packet(codeGSSENCRequest))
	if b := r.readByte(); b != 'N' {
		t.Fatalf("GSSENCRequest answered %q", b)
	}
	r.write(packet(codeSSLRequest))
	if b := r.readByte(); b != 'N' {
		t.Fatalf("SSLRequest answered %q without TLS config", b)
	}
	r.write(packet(protocol30, params("user", "bob")...))
	if _, ok := r.receive().(*pgproto3.AuthenticationOk); !ok {
		t.Fatal("no AuthenticationOk")
	}
	res := r.result()
	if res.err != nil || res.client.Startup.Params["database"] != "bob" {
		t.Fatalf("err %v, params %v", res.err, res.startup.Params)
	}
}

func TestSecondSSLRequestRefused(t *testing.T) {
	r := dialRaw(t, context.Background(), trustAll)
	r.write(packet(codeSSLRequest))
	r.readByte()
	r.write(packet(codeSSLRequest))
	// PostgreSQL reads a repeated request's code as a protocol version.
	r.expectError(CodeFeatureNotSupported, "unsupported frontend protocol 1234.5679: server supports 3.0 to 3.0")
}

func TestOldProtocolRefused(t *testing.T) {
	r := dialRaw(t, context.Background(), trustAll)
	r.write(packet(2<<16, params("user", "bob")...))
	r.expectError(CodeFeatureNotSupported, "unsupported frontend protocol 2.0: server supports 3.0 to 3.0")
	if e := asError(r.result().err); e == nil || e.Code != CodeFeatureNotSupported {
		t.Fatalf("server returned %v", e)
	}
}

func TestNewerMinorNegotiated(t *testing.T) {
	r := dialRaw(t, context.Background(), trustAll)
	r.write(packet(3<<16|2, params("user", "bob", "_pq_.compression", "on", "application_name", "x")...))
	npv, ok := r.receive().(*pgproto3.NegotiateProtocolVersion)
	if !ok {
		t.Fatal("no NegotiateProtocolVersion")
	}
	if npv.NewestMinorProtocol != 3<<16 || len(npv.UnrecognizedOptions) != 1 || npv.UnrecognizedOptions[0] != "_pq_.compression" {
		t.Fatalf("NegotiateProtocolVersion %+v", npv)
	}
	if _, ok := r.receive().(*pgproto3.AuthenticationOk); !ok {
		t.Fatal("no AuthenticationOk")
	}
	res := r.result()
	if _, kept := res.startup.Params["_pq_.compression"]; kept || res.startup.Params["application_name"] != "x" {
		t.Fatalf("params %v", res.startup.Params)
	}
}

func TestStartupPacketLimits(t *testing.T) {
	cases := []struct {
		name, code, message string
		packet              []byte
	}{
		{"too long", CodeProtocolViolation, "invalid length of startup packet", binary.BigEndian.AppendUint32(nil, 10_005)}, // 10,000 after the length word
		{"too short", CodeProtocolViolation, "invalid length of startup packet", binary.BigEndian.AppendUint32(nil, 7)},
		{"negative", CodeProtocolViolation, "invalid length of startup packet", []byte{0xff, 0xff, 0xff, 0xf0}},
		{"no terminator", CodeProtocolViolation, "invalid startup packet layout: expected terminator as last byte", packet(protocol30, 'u', 's', 'e', 'r', 0, 'b', 0)},
		{"no user", CodeInvalidAuthorization, "no PostgreSQL user name specified in startup packet", packet(protocol30, params("database", "x")...)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := dialRaw(t, context.Background(), trustAll)
			r.write(tc.packet)
			r.expectError(tc.code, tc.message)
			if r.result().err == nil {
				t.Fatal("Accept succeeded")
			}
		})
	}
}

// Overlong user and database names are cut to 63 bytes, as PostgreSQL
// cuts them, before the user is looked up.
func TestStartupNamesTruncated(t *testing.T) {
	long := strings.Repeat("u", 70)
	r := dialRaw(t, context.Background(), trustAll)
	r.write(packet(protocol30, params("user", long, "database", strings.Repeat("d", 64))...))
	if _, ok := r.receive().(*pgproto3.AuthenticationOk); !ok {
		t.Fatal("no AuthenticationOk")
	}
	res := r.result()
	if u, d := res.startup.Params["user"], res.startup.Params["database"]; u != long[:63] || d != strings.Repeat("d", 63) {
		t.Fatalf("user %q (%d bytes), database %q", u, len(u), d)
	}
}

func TestStartupTimeout(t *testing.T) {
	cfg := &ServerConfig{StartupTimeout: 100 * time.Millisecond, Credentials: trustAll.Credentials}
	r := dialRaw(t, context.Background(), cfg)
	r.write([]byte{0, 0}) // half a length, then silence
	start := time.Now()
	err := r.result().err
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Accept returned %v, want a timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("timeout took %v", d)
	}
}

func TestContextCancelStopsAccept(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := dialRaw(t, ctx, trustAll)
	time.AfterFunc(50*time.Millisecond, cancel)
	if err := r.result().err; !errors.Is(err, context.Canceled) {
		t.Fatalf("Accept returned %v, want context.Canceled", err)
	}
}

// Plaintext bytes pipelined behind an SSLRequest must not be taken as part
// of the TLS stream (CVE-2021-23214's shape): the handshake fails.
func TestBytesAfterSSLRequestNotTrusted(t *testing.T) {
	tlsCfg, _ := testTLS(t)
	r := dialRaw(t, context.Background(), &ServerConfig{TLS: tlsCfg, Credentials: trustAll.Credentials})
	r.write(append(packet(codeSSLRequest), packet(protocol30, params("user", "bob")...)...))
	if b := r.readByte(); b != 'S' {
		t.Fatalf("SSLRequest answered %q", b)
	}
	if res := r.result(); res.err == nil {
		t.Fatal("Accept took plaintext after 'S' as a startup")
	}
}

func TestDirectTLSNeedsALPN(t *testing.T) {
	tlsCfg, _ := testTLS(t)
	cfg := &ServerConfig{TLS: tlsCfg, Credentials: trustAll.Credentials}

	r := dialRaw(t, context.Background(), cfg)
	r.startTLS() // a ClientHello without ALPN
	r.expectError(CodeProtocolViolation, "received direct SSL connection request without ALPN protocol negotiation extension")

	r = dialRaw(t, context.Background(), cfg)
	r.startTLS("postgresql")
	r.write(packet(protocol30, params("user", "bob")...))
	if _, ok := r.receive().(*pgproto3.AuthenticationOk); !ok {
		t.Fatal("no AuthenticationOk")
	}
	if res := r.result(); res.err != nil || !res.client.Startup.TLS {
		t.Fatalf("err %v", res.err)
	}
}

func TestTerminateDuringAuthIsQuiet(t *testing.T) {
	r := dialRaw(t, context.Background(), &ServerConfig{Credentials: users(map[string]Credential{"bob": {Method: AuthMD5, Password: "pw"}})})
	r.write(packet(protocol30, params("user", "bob")...))
	if _, ok := r.receive().(*pgproto3.AuthenticationMD5Password); !ok {
		t.Fatal("no md5 challenge")
	}
	r.send(&pgproto3.Terminate{})
	if err := r.result().err; !errors.Is(err, io.EOF) {
		t.Fatalf("Accept returned %v, want io.EOF", err)
	}
}

func TestHangUpDuringAuthIsQuiet(t *testing.T) {
	r := dialRaw(t, context.Background(), &ServerConfig{Credentials: users(map[string]Credential{"bob": {Method: AuthSCRAM, Password: "pw"}})})
	r.write(packet(protocol30, params("user", "bob")...))
	if _, ok := r.receive().(*pgproto3.AuthenticationSASL); !ok {
		t.Fatal("no SASL challenge")
	}
	r.c.Close()
	if err := r.result().err; err != io.EOF {
		t.Fatalf("Accept returned %v, want io.EOF", err)
	}
}

func TestWrongMessageDuringAuth(t *testing.T) {
	r := dialRaw(t, context.Background(), &ServerConfig{Credentials: users(map[string]Credential{"bob": {Method: AuthMD5, Password: "pw"}})})
	r.write(packet(protocol30, params("user", "bob")...))
	r.receive()
	r.send(&pgproto3.Query{String: "select 1"})
	r.expectError(CodeProtocolViolation, "expected password response, got message type 81")
}

// TestPasswordPacket: a cleartext password or md5 response with bytes
// after its terminator, or none, or empty, is refused as PostgreSQL's
// recv_password_packet refuses it, even when the password is right.
func TestPasswordPacket(t *testing.T) {
	for _, method := range []AuthMethod{AuthPassword, AuthMD5} {
		cfg := &ServerConfig{Credentials: users(map[string]Credential{"bob": {Method: method, Password: "pw"}})}
		for name, tc := range map[string]struct {
			body func(string) string // of the right answer
			code string
			msg  string
		}{
			"trailing bytes": {func(pw string) string { return pw + "\x00x" }, CodeProtocolViolation, "invalid password packet size"},
			"no terminator":  {func(pw string) string { return pw }, CodeProtocolViolation, "invalid password packet size"},
			"empty":          {func(string) string { return "\x00" }, CodeInvalidPassword, "empty password returned by client"},
		} {
			t.Run(fmt.Sprintf("%v %s", method, name), func(t *testing.T) {
				r := dialRaw(t, context.Background(), cfg)
				r.write(packet(protocol30, params("user", "bob")...))
				right := "pw"
				switch m := r.receive().(type) {
				case *pgproto3.AuthenticationCleartextPassword:
				case *pgproto3.AuthenticationMD5Password:
					right = "md5" + md5hex(md5hex("pw"+"bob")+string(m.Salt[:]))
				default:
					t.Fatalf("got %T", m)
				}
				body := tc.body(right)
				r.write(append(binary.BigEndian.AppendUint32([]byte{'p'}, uint32(4+len(body))), body...))
				r.expectError(tc.code, tc.msg)
			})
		}
	}
}

// scramFirst starts a SCRAM exchange for user and returns the server-first-message.
func scramFirst(t *testing.T, r *raw, user, clientFirst string) string {
	t.Helper()
	r.write(packet(protocol30, params("user", user)...))
	sasl, ok := r.receive().(*pgproto3.AuthenticationSASL)
	if !ok || len(sasl.AuthMechanisms) != 1 || sasl.AuthMechanisms[0] != "SCRAM-SHA-256" {
		t.Fatalf("want AuthenticationSASL [SCRAM-SHA-256], got %+v", sasl)
	}
	r.send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte(clientFirst)})
	m := r.receive()
	cont, ok := m.(*pgproto3.AuthenticationSASLContinue)
	if !ok {
		t.Fatalf("want AuthenticationSASLContinue, got %T %+v", m, m)
	}
	return string(cont.Data)
}

func TestUnknownUserGetsStableMockSalt(t *testing.T) {
	cfg := &ServerConfig{Credentials: users(map[string]Credential{"bob": {Method: AuthSCRAM, Password: SCRAMVerifier("pw")}})}
	salt := func(user string) string {
		r := dialRaw(t, context.Background(), cfg)
		sf := scramFirst(t, r, user, "n,,n=,r=abc")
		for _, a := range strings.Split(sf, ",") {
			if s, ok := strings.CutPrefix(a, "s="); ok {
				return s
			}
		}
		t.Fatalf("no salt in %q", sf)
		return ""
	}
	if a, b := salt("ghost"), salt("ghost"); a != b {
		t.Errorf("unknown user's salt changed between attempts: %s, %s", a, b)
	}
	if a, b := salt("ghost"), salt("phantom"); a == b {
		t.Errorf("two unknown users share a salt")
	}
}

func TestSCRAMRefusals(t *testing.T) {
	cfg := &ServerConfig{Credentials: users(map[string]Credential{"bob": {Method: AuthSCRAM, Password: "pw"}})}
	t.Run("channel binding", func(t *testing.T) {
		r := dialRaw(t, context.Background(), cfg)
		r.write(packet(protocol30, params("user", "bob")...))
		r.receive()
		r.send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("p=tls-server-end-point,,n=,r=abc")})
		r.expectError(CodeProtocolViolation, "the client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data")
	})
	t.Run("PLUS mechanism", func(t *testing.T) {
		r := dialRaw(t, context.Background(), cfg)
		r.write(packet(protocol30, params("user", "bob")...))
		r.receive()
		r.send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256-PLUS", Data: []byte("p=tls-server-end-point,,n=,r=abc")})
		r.expectError(CodeProtocolViolation, "client selected an invalid SASL authentication mechanism")
	})
	t.Run("authzid", func(t *testing.T) {
		r := dialRaw(t, context.Background(), cfg)
		r.write(packet(protocol30, params("user", "bob")...))
		r.receive()
		r.send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,a=eve,n=,r=abc")})
		r.expectError(CodeFeatureNotSupported, "client uses authorization identity, but it is not supported")
	})
	t.Run("wrong nonce", func(t *testing.T) {
		r := dialRaw(t, context.Background(), cfg)
		scramFirst(t, r, "bob", "n,,n=,r=abc")
		r.send(&pgproto3.SASLResponse{Data: []byte("c=biws,r=abcX,p=" + base64.StdEncoding.EncodeToString(make([]byte, 32)))})
		r.expectError(CodeProtocolViolation, "malformed SCRAM message: nonce does not match")
	})
	t.Run("channel binding data changed", func(t *testing.T) {
		r := dialRaw(t, context.Background(), cfg)
		sf := scramFirst(t, r, "bob", "n,,n=,r=abc")
		nonce := strings.TrimPrefix(strings.Split(sf, ",")[0], "r=")
		r.send(&pgproto3.SASLResponse{Data: []byte("c=eSws,r=" + nonce + ",p=" + base64.StdEncoding.EncodeToString(make([]byte, 32)))})
		r.expectError(CodeProtocolViolation, "unexpected SCRAM channel-binding attribute in client-final-message")
	})
	t.Run("wrong proof", func(t *testing.T) {
		r := dialRaw(t, context.Background(), cfg)
		sf := scramFirst(t, r, "bob", "n,,n=,r=abc")
		nonce := strings.TrimPrefix(strings.Split(sf, ",")[0], "r=")
		r.send(&pgproto3.SASLResponse{Data: []byte("c=biws,r=" + nonce + ",p=" + base64.StdEncoding.EncodeToString(make([]byte, 32)))})
		r.expectError(CodeInvalidPassword, `password authentication failed for user "bob"`)
		if !IsAuthFailure(r.result().err) {
			t.Fatal("not an auth failure")
		}
	})
}

// RFC 7677 section 3's example: user "user", password "pencil".
func TestSCRAMRFC7677Vector(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	sec := deriveSCRAM("pencil", salt, 4096)
	authMessage := "n=user,r=rOprNGfwEbeRWgbNEkqO" +
		",r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096" +
		",c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
	proof, _ := base64.StdEncoding.DecodeString("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
	clientKey := make([]byte, 32)
	subtle.XORBytes(clientKey, proof, hmacSHA256(sec.storedKey, authMessage))
	if got := sha256.Sum256(clientKey); !hmac.Equal(got[:], sec.storedKey) {
		t.Error("the RFC's client proof does not verify")
	}
	if got := base64.StdEncoding.EncodeToString(hmacSHA256(sec.serverKey, authMessage)); got != "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=" {
		t.Errorf("server signature %s", got)
	}
	back, err := parseSCRAMVerifier(sec.String())
	if err != nil || back.String() != sec.String() {
		t.Fatalf("verifier round trip: %v", err)
	}
}

func TestParseSCRAMVerifierRefuses(t *testing.T) {
	for _, s := range []string{
		"SCRAM-SHA-256$",
		"SCRAM-SHA-256$4096:c2FsdA==$",
		"SCRAM-SHA-256$0:c2FsdA==$" + strings.Repeat("A", 43) + "=:" + strings.Repeat("A", 43) + "=",
		"SCRAM-SHA-256$4096:!!$" + strings.Repeat("A", 43) + "=:" + strings.Repeat("A", 43) + "=",
		"SCRAM-SHA-256$4096:c2FsdA==$c2hvcnQ=:" + strings.Repeat("A", 43) + "=",
	} {
		if _, err := parseSCRAMVerifier(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

// With DeferAuthOK nothing is written until Welcome, which then starts
// with AuthenticationOk.
func TestDeferAuthOK(t *testing.T) {
	srv, cli := net.Pipe()
	defer srv.Close()
	defer cli.Close()
	cfg := &ServerConfig{DeferAuthOK: true, Credentials: func(string, string) (Credential, error) {
		return Credential{Method: AuthTrust}, nil
	}}
	accepted := make(chan *Client, 1)
	welcome := make(chan struct{})
	go func() {
		cl, _, err := Accept(context.Background(), srv, cfg)
		if err != nil {
			t.Error(err)
			close(accepted)
			return
		}
		accepted <- cl
		<-welcome
		if err := cl.Welcome(map[string]string{"server_version": "15"}); err != nil {
			t.Error(err)
		}
	}()
	fe := pgproto3.NewFrontend(cli, cli)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": "u"}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	if <-accepted == nil {
		t.Fatal("not accepted")
	}
	cli.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := cli.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("before Welcome the client read %v, want nothing", err)
	}
	cli.SetReadDeadline(time.Now().Add(5 * time.Second))
	close(welcome)
	var got []string
	for len(got) < 4 {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%T", msg))
	}
	if want := "*pgproto3.AuthenticationOk *pgproto3.ParameterStatus *pgproto3.BackendKeyData *pgproto3.ReadyForQuery"; strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}

// capture is a net.Conn that keeps what is written to it.
type capture struct {
	net.Conn
	buf bytes.Buffer
}

func (c *capture) Write(p []byte) (int, error) { return c.buf.Write(p) }

// Welcome's hand-made encoding is byte for byte pgproto3's, in one write.
func TestWelcomeBytes(t *testing.T) {
	params := map[string]string{"server_version": "15.18", "client_encoding": "UTF8", "DateStyle": "ISO, MDY", "application_name": ""}
	for _, deferred := range []bool{false, true} {
		c := &capture{}
		cl := &Client{Conn: c, Key: CancelKey{PID: 0x01020304, Secret: []byte{9, 8, 7, 6}}, authOK: deferred}
		if err := cl.Welcome(params); err != nil {
			t.Fatal(err)
		}
		var want []byte
		if deferred {
			want, _ = (&pgproto3.AuthenticationOk{}).Encode(want)
		}
		for _, k := range []string{"DateStyle", "application_name", "client_encoding", "server_version"} {
			want, _ = (&pgproto3.ParameterStatus{Name: k, Value: params[k]}).Encode(want)
		}
		want, _ = (&pgproto3.BackendKeyData{ProcessID: 0x01020304, SecretKey: []byte{9, 8, 7, 6}}).Encode(want)
		want, _ = (&pgproto3.ReadyForQuery{TxStatus: 'I'}).Encode(want)
		if !bytes.Equal(c.buf.Bytes(), want) {
			t.Errorf("deferred %v:\n got %q\nwant %q", deferred, c.buf.Bytes(), want)
		}
		if cl.authOK {
			t.Error("AuthenticationOk still owed after Welcome")
		}
	}
}
