// Authentication and startup behaviour against PostgreSQL 15 for the same
// client bytes, and Accept against Handshake. Each test asserts what
// PostgreSQL 15 does (checked against a real 15.18 server where noted);
// each comment says what pgwire did before the fix (a review of
// 2026-12-05).

package pgwire

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/qpkit/qpkit/pkg/hba"
)

// An unknown user under an md5 rule gets an md5 challenge (auth.go
// authenticate: method AuthMD5 with known=false goes to authMD5), while a
// known user with a SCRAM verifier gets SCRAM: the first server message
// tells whether a user exists. PostgreSQL 15 (CheckPWChallengeAuth) runs
// the mock exchange with password_encryption's method, scram-sha-256 by
// default: a real 15.18 server with "host all all 127.0.0.1/32 md5"
// answers StartupMessage{user=ghost} with AuthenticationSASL.
func TestAuthParityUnknownUserUnderMD5RuleGetsSCRAM(t *testing.T) {
	cfg := &ServerConfig{
		Credentials: users(map[string]Credential{"bob": {Method: AuthSCRAM, Password: SCRAMVerifier("pw")}}),
		Rules:       func(Peer) (AuthMethod, string) { return AuthMD5, "" },
	}
	first := func(user string) pgproto3.BackendMessage {
		r := dialRaw(t, context.Background(), cfg)
		r.write(packet(protocol30, params("user", user)...))
		return r.receive()
	}
	if m, ok := first("bob").(*pgproto3.AuthenticationSASL); !ok {
		t.Fatalf("known user: got %T %+v", m, m)
	}
	if m := first("ghost"); func() bool { _, ok := m.(*pgproto3.AuthenticationSASL); return !ok }() {
		t.Fatalf("unknown user under an md5 rule: got %T, want AuthenticationSASL as PostgreSQL 15 (and as the known user got)", m)
	}
}

// Handshake refuses an SSLRequest (or GSSENCRequest) with bytes pipelined
// behind it without first sending the 'N' (loophandshake.go Feed, the
// "Sent before the answer" branch returns h.fail(out, ...) before
// out = append(out, 'N')). Accept sends 'N' and then the ErrorResponse
// (startup.go: c.Write('N') then noneBuffered), and so does PostgreSQL
// 15.18: "N" followed by E...08P01 "received unencrypted data after SSL
// request". A client reading the one-byte answer gets 'E' from Handshake.
func TestAuthParityHandshakeSendsNBeforeUnencryptedDataError(t *testing.T) {
	startup := packet(protocol30, params("user", "tina")...)
	for _, code := range []uint32{codeSSLRequest, codeGSSENCRequest} {
		h := NewHandshake(quick(hsUsers))
		out, step := h.Feed(append(packet(code), startup...))
		if step != StepFail {
			t.Fatalf("code %d: step %d", code, step)
		}
		if len(out) == 0 || out[0] != 'N' {
			t.Errorf("code %d: Handshake sent %q; want 'N' then the ErrorResponse, as Accept and PostgreSQL send", code, out)
		}
	}
	// Accept, for comparison: 'N' first.
	r := dialRaw(t, context.Background(), trustAll)
	r.write(append(packet(codeSSLRequest), startup...))
	if b := r.readByte(); b != 'N' {
		t.Fatalf("Accept answered %q", b)
	}
	r.expectError(CodeProtocolViolation, "received unencrypted data after SSL request")
}

// The startup packet bound counts the length word: startup.go startup()
// refuses n > cfg.maxStartup() where n includes its own 4 bytes (and
// loophandshake.go Feed does the same). PostgreSQL 15's
// ProcessStartupPacket subtracts the 4 bytes first (len -= 4; len >
// MAX_STARTUP_PACKET_LENGTH), so it takes packets of up to 10004 bytes:
// a real 15.18 server answers a 10004-byte StartupMessage with
// AuthenticationSASL and drops a 10005-byte one.
func TestAuthParityStartupPacketOf10004BytesAccepted(t *testing.T) {
	body := params("user", "bob", "application_name", "")
	pad := 10004 - 8 - len(body)
	b := params("user", "bob", "application_name", strings.Repeat("a", pad))
	pkt := packet(protocol30, b...)
	if len(pkt) != 10004 {
		t.Fatalf("built %d bytes", len(pkt))
	}
	r := dialRaw(t, context.Background(), trustAll)
	r.write(pkt)
	if m := r.receive(); func() bool { _, ok := m.(*pgproto3.AuthenticationOk); return !ok }() {
		t.Fatalf("10004-byte startup packet: got %T %+v, want AuthenticationOk as PostgreSQL 15", m, m)
	}
}

// During a SASL exchange a message other than 'p' is refused with
// "expected password response" (auth.go readAuth, loophandshake.go
// authMessage). PostgreSQL 15's CheckSASLAuth says "expected SASL
// response, got message type 81" (08P01), as a real 15.18 server does.
func TestAuthParitySASLWrongMessageType(t *testing.T) {
	cfg := &ServerConfig{Credentials: users(map[string]Credential{"bob": {Method: AuthSCRAM, Password: "pw"}})}
	r := dialRaw(t, context.Background(), cfg)
	r.write(packet(protocol30, params("user", "bob")...))
	r.receive()
	r.send(&pgproto3.Query{String: "select 1"})
	r.expectError(CodeProtocolViolation, "expected SASL response, got message type 81")
}

// A SASLInitialResponse without an initial response (data length -1) is
// refused as "invalid SASL initial response" (scram.go parseSASLInitial).
// PostgreSQL 15 (pg_be_scram_exchange, input == NULL) answers an empty
// AuthenticationSASLContinue and takes the client-first-message in the
// next SASLResponse, as RFC 4422 allows; a real 15.18 server does so.
func TestAuthParitySASLWithoutInitialResponse(t *testing.T) {
	cfg := &ServerConfig{Credentials: users(map[string]Credential{"bob": {Method: AuthSCRAM, Password: "pw"}})}
	r := dialRaw(t, context.Background(), cfg)
	r.write(packet(protocol30, params("user", "bob")...))
	r.receive()
	body := append([]byte("SCRAM-SHA-256\x00"), 0xff, 0xff, 0xff, 0xff)
	r.write(append(binary.BigEndian.AppendUint32([]byte{'p'}, uint32(4+len(body))), body...))
	m := r.receive()
	cont, ok := m.(*pgproto3.AuthenticationSASLContinue)
	if !ok || len(cont.Data) != 0 {
		t.Fatalf("got %T %+v, want an empty AuthenticationSASLContinue as PostgreSQL 15", m, m)
	}
	r.send(&pgproto3.SASLResponse{Data: []byte("n,,n=,r=abc")})
	if m := r.receive(); func() bool { _, ok := m.(*pgproto3.AuthenticationSASLContinue); return !ok }() {
		t.Fatalf("client-first in SASLResponse: got %T %+v", m, m)
	}
}

// reviewProof is the client proof of password over authMessage.
func reviewProof(password, serverFirst, authMessage string) string {
	var salt string
	iter := 0
	for _, a := range strings.Split(serverFirst, ",") {
		switch {
		case strings.HasPrefix(a, "s="):
			salt = a[2:]
		case strings.HasPrefix(a, "i="):
			iter, _ = strconv.Atoi(a[2:])
		}
	}
	raw, _ := base64.StdEncoding.DecodeString(salt)
	salted, _ := pbkdf2.Key(sha256.New, password, raw, iter, 32)
	mac := func(key []byte, msg string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	ck := mac(salted, "Client Key")
	st := sha256.Sum256(ck)
	p := mac(st[:], authMessage)
	for i := range p {
		p[i] ^= ck[i]
	}
	return base64.StdEncoding.EncodeToString(p)
}

// parseClientFinal takes the proof after the LAST ",p=" (scram.go
// strings.LastIndex), so "c=..,r=..,p=X,p=Y" is read as an extension
// "p=X" and proof Y, and a login succeeds. PostgreSQL 15's
// read_client_final_message takes the FIRST p= attribute as the proof and
// refuses anything after it ("malformed SCRAM message", "Garbage found at
// the end of client-final-message", 08P01).
func TestAuthParitySCRAMSecondProofRefused(t *testing.T) {
	cfg := &ServerConfig{Credentials: users(map[string]Credential{"bob": {Method: AuthSCRAM, Password: "pw"}})}
	r := dialRaw(t, context.Background(), cfg)
	sf := scramFirst(t, r, "bob", "n,,n=,r=abc")
	nonce := strings.TrimPrefix(strings.Split(sf, ",")[0], "r=")
	without := "c=biws,r=" + nonce + ",p=" + base64.StdEncoding.EncodeToString(make([]byte, 32))
	proof := reviewProof("pw", sf, "n=,r=abc,"+sf+","+without)
	r.send(&pgproto3.SASLResponse{Data: []byte(without + ",p=" + proof)})
	m := r.receive()
	if e, ok := m.(*pgproto3.ErrorResponse); !ok || e.Code != CodeProtocolViolation {
		t.Fatalf("two p= attributes: got %T %+v, want an 08P01 ErrorResponse as PostgreSQL 15", m, m)
	}
}

// isMD5Secret (auth.go) takes "md5" followed by 32 hex digits of either
// case as an md5 hash and lowercases it (checkPlain, checkMD5).
// PostgreSQL 15's get_password_type requires lowercase hex
// (MD5_PASSWD_CHARSET "0123456789abcdef"); anything else is a plaintext
// password. So with the password method, the password "pw" is accepted
// here against the secret "md5"+UPPER(md5hex("pw"+"bob")), which
// PostgreSQL would compare literally and refuse (28P01).
func TestAuthParityUppercaseMD5SecretIsPlaintext(t *testing.T) {
	stored := "md5" + strings.ToUpper(md5hex("pw"+"bob"))
	cfg := &ServerConfig{Credentials: users(map[string]Credential{"bob": {Method: AuthPassword, Password: stored}})}
	try := func(password string) pgproto3.BackendMessage {
		r := dialRaw(t, context.Background(), cfg)
		r.write(packet(protocol30, params("user", "bob")...))
		if m, ok := r.receive().(*pgproto3.AuthenticationCleartextPassword); !ok {
			t.Fatalf("got %T", m)
		}
		r.send(&pgproto3.PasswordMessage{Password: password})
		return r.receive()
	}
	if m := try("pw"); func() bool { _, ok := m.(*pgproto3.ErrorResponse); return !ok }() {
		t.Errorf("password %q accepted against %q: got %T, want 28P01 (PostgreSQL reads the secret as plaintext)", "pw", stored, m)
	}
	if m := try(stored); func() bool { _, ok := m.(*pgproto3.AuthenticationOk); return !ok }() {
		t.Errorf("the literal secret refused: got %T %+v, want AuthenticationOk", m, m)
	}
}

// HBARules' refusals quote names with Go's %q (hba.go NoEntry and
// Rejected), escaping quotes and backslashes. PostgreSQL 15 puts the
// names in plain double quotes: a real 15.18 server says
// `pg_hba.conf rejects connection for host "127.0.0.1", user "r"j", database "rejdb", no encryption`
// and `no pg_hba.conf entry for host "127.0.0.1", user "a"b\c", database "nodb", no encryption`.
func TestAuthParityHBAMessagesQuoteLikePostgres(t *testing.T) {
	rules, err := hba.Parse(strings.NewReader("host rejdb all 127.0.0.1/32 reject\n"), "pg_hba.conf")
	if err != nil {
		t.Fatal(err)
	}
	decide := HBARules(func() *hba.Rules { return rules }, nil)
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000}
	if m, why := decide(Peer{Database: "rejdb", User: `r"j`, Addr: addr}); m != AuthReject ||
		why != `pg_hba.conf rejects connection for host "127.0.0.1", user "r"j", database "rejdb", no encryption` {
		t.Errorf("reject line: %v %s", m, why)
	}
	if m, why := decide(Peer{Database: "nodb", User: `a"b\c`, Addr: addr}); m != AuthReject ||
		why != `no pg_hba.conf entry for host "127.0.0.1", user "a"b\c", database "nodb", no encryption` {
		t.Errorf("no line: %v %s", m, why)
	}
}

// peerIP (hbarules.go) turns a *net.TCPAddr whose IP is unset into an
// invalid address, which hba reads as a Unix-socket client: a TCP client
// then matches "local" lines (trust here). rawconn's listener builds
// exactly such an address (&net.TCPAddr{}) when it cannot decode the
// peer's sockaddr. A TCP client must never be taken for a local one; in
// PostgreSQL local lines match Unix sockets only.
func TestAuthParityHBATCPClientWithoutIPIsNotLocal(t *testing.T) {
	rules, err := hba.Parse(strings.NewReader("local all all trust\nhost all all 0.0.0.0/0 scram-sha-256\n"), "pg_hba.conf")
	if err != nil {
		t.Fatal(err)
	}
	decide := HBARules(func() *hba.Rules { return rules }, nil)
	if m, _ := decide(Peer{Database: "d", User: "u", Addr: &net.TCPAddr{}}); m == AuthTrust {
		t.Errorf("a TCP client without a decoded address matched the local trust line")
	}
}

// The refusal of an unsupported protocol says "server supports 3.0"
// (startup.go startup, default branch), and a second SSLRequest is 08P01
// "unexpected SSLRequest" (startup.go, codeSSLRequest branch). A real
// PostgreSQL 15.18 server answers protocol 4.0 with 0A000 "unsupported
// frontend protocol 4.0: server supports 3.0 to 3.0", and a second
// SSLRequest falls through to the same check: 0A000 "unsupported frontend
// protocol 1234.5679: server supports 3.0 to 3.0".
func TestAuthParityUnsupportedProtocolLikePostgres(t *testing.T) {
	t.Run("protocol 4.0", func(t *testing.T) {
		r := dialRaw(t, context.Background(), trustAll)
		r.write(packet(4<<16, params("user", "bob")...))
		r.expectError(CodeFeatureNotSupported, "unsupported frontend protocol 4.0: server supports 3.0 to 3.0")
	})
	t.Run("second SSLRequest", func(t *testing.T) {
		r := dialRaw(t, context.Background(), trustAll)
		r.write(packet(codeSSLRequest))
		r.readByte()
		r.write(packet(codeSSLRequest))
		r.expectError(CodeFeatureNotSupported, "unsupported frontend protocol 1234.5679: server supports 3.0 to 3.0")
	})
}

// Verified correct (passes): a proof of the wrong length is 08P01, as
// PostgreSQL 15 ("malformed SCRAM message", detail "Malformed proof");
// a non-UTF-8 unknown user gets the mock SCRAM exchange and 28P01; an
// empty stored secret never logs in, even with the proof of "".
func TestAuthParityVerifiedSCRAMEdges(t *testing.T) {
	cfg := &ServerConfig{Credentials: users(map[string]Credential{"bob": {Method: AuthSCRAM, Password: "pw"}, "nopw": {Method: AuthSCRAM}})}
	t.Run("short proof", func(t *testing.T) {
		r := dialRaw(t, context.Background(), cfg)
		sf := scramFirst(t, r, "bob", "n,,n=,r=abc")
		nonce := strings.TrimPrefix(strings.Split(sf, ",")[0], "r=")
		r.send(&pgproto3.SASLResponse{Data: []byte("c=biws,r=" + nonce + ",p=" + base64.StdEncoding.EncodeToString(make([]byte, 31)))})
		if e, ok := r.receive().(*pgproto3.ErrorResponse); !ok || e.Code != CodeProtocolViolation {
			t.Fatalf("got %+v", e)
		}
	})
	for _, tc := range []struct{ user, password string }{{"\xff\xfe", "pw"}, {"nopw", ""}} {
		r := dialRaw(t, context.Background(), cfg)
		sf := scramFirst(t, r, tc.user, "n,,n=,r=abc")
		nonce := strings.TrimPrefix(strings.Split(sf, ",")[0], "r=")
		without := "c=biws,r=" + nonce
		r.send(&pgproto3.SASLResponse{Data: []byte(without + ",p=" + reviewProof(tc.password, sf, "n=,r=abc,"+sf+","+without))})
		if e, ok := r.receive().(*pgproto3.ErrorResponse); !ok || e.Code != CodeInvalidPassword {
			t.Fatalf("%q: got %+v", tc.user, e)
		}
	}
}

// Verified correct (passes): user names are looked up exactly (a user
// list's "Bob" is not "bob"), and Handshake and Accept give the same
// answer to a wrong md5 password (28P01, same message).
func TestAuthParityVerifiedExactNamesAndAgreement(t *testing.T) {
	list, err := ReadUserList(strings.NewReader(`"Bob" "pw"`+"\n"), "userlist.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := list["bob"]; ok {
		t.Fatal("user names folded")
	}
	m := map[string]Credential{"mia": {Method: AuthMD5, Password: "pw"}}
	h := NewHandshake(quick(m))
	out, _ := h.Feed(packet(protocol30, params("user", "mia")...))
	salt := backend(t, out)[0].(*pgproto3.AuthenticationMD5Password).Salt
	out, step := h.Feed(passwordMsg("mia", "wrong", salt))
	he := backend(t, out)[0].(*pgproto3.ErrorResponse)
	r := dialRaw(t, context.Background(), quick(m))
	r.write(packet(protocol30, params("user", "mia")...))
	s2 := r.receive().(*pgproto3.AuthenticationMD5Password).Salt
	r.write(passwordMsg("mia", "wrong", s2))
	ae := r.receive().(*pgproto3.ErrorResponse)
	if step != StepFail || he.Code != ae.Code || he.Message != ae.Message || ae.Code != CodeInvalidPassword {
		t.Fatalf("Handshake %s %q, Accept %s %q", he.Code, he.Message, ae.Code, ae.Message)
	}
}
