// Tests of Handshake: the cases it answers itself, and the hand-over to Accept for the rest.

package pgwire

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// quick is a ServerConfig whose QuickCredentials knows the users in m.
func quick(m map[string]Credential) *ServerConfig {
	return &ServerConfig{
		DeferAuthOK: true,
		Credentials: users(m),
		QuickCredentials: func(user, _ string) (Credential, bool) {
			c, ok := m[user]
			return c, ok
		},
	}
}

var hsUsers = map[string]Credential{
	"tina":    {Method: AuthTrust},
	"mia":     {Method: AuthMD5, Password: "pw"},
	"hash":    {Method: AuthMD5, Password: MD5Secret("hash", "pw")},
	"sam":     {Method: AuthSCRAM, Password: "pw"},
	"ver":     {Method: AuthSCRAM, Password: SCRAMVerifier("pw")},
	"md5ver":  {Method: AuthMD5, Password: SCRAMVerifier("pw")}, // md5 with a verifier runs SCRAM
	"scrmd5":  {Method: AuthSCRAM, Password: MD5Secret("scrmd5", "pw")},
	"empty":   {Method: AuthMD5},
	"refused": {Method: AuthReject},
}

// feed gives h the bytes one at a time (every split a client's writes can
// take); each step before the last must be StepMore.
func feed(t *testing.T, h *Handshake, in []byte) ([]byte, Step) {
	t.Helper()
	var out []byte
	for i := range in {
		o, step := h.Feed(in[i : i+1])
		out = append(out, o...)
		if step != StepMore {
			if i != len(in)-1 {
				t.Fatalf("step %d after %d of %d bytes", step, i+1, len(in))
			}
			return out, step
		}
	}
	return out, StepMore
}

// backend decodes the server messages in out.
func backend(t *testing.T, out []byte) []pgproto3.BackendMessage {
	t.Helper()
	fe := pgproto3.NewFrontend(bytes.NewReader(out), io.Discard)
	var msgs []pgproto3.BackendMessage
	for {
		m, err := fe.Receive()
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			return msgs
		}
		if err != nil {
			t.Fatalf("decoding %q: %v", out, err)
		}
		switch m := m.(type) { // Receive reuses its messages
		case *pgproto3.AuthenticationMD5Password:
			c := *m
			msgs = append(msgs, &c)
		case *pgproto3.ErrorResponse:
			c := *m
			msgs = append(msgs, &c)
		default:
			msgs = append(msgs, m)
		}
	}
}

func passwordMsg(user, password string, salt [4]byte) []byte {
	resp := "md5" + md5hex(md5hex(password+user)+string(salt[:]))
	b, _ := (&pgproto3.PasswordMessage{Password: resp}).Encode(nil)
	return b
}

func TestHandshakeTrust(t *testing.T) {
	h := NewHandshake(quick(hsUsers))
	in := packet(protocol30, params("user", "tina", "database", "db", "application_name", "x")...)
	out, step := feed(t, h, in)
	if step != StepDone || len(out) != 0 {
		t.Fatalf("trust: step %d, out %q; want StepDone and nothing (AuthenticationOk is deferred)", step, out)
	}
	// Bytes the client sent after its startup reach the session first.
	h.Feed([]byte("Q-pipelined"))
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	cl := h.Client(a)
	if cl.Startup.Params["application_name"] != "x" || cl.Startup.Params["database"] != "db" || !cl.authOK {
		t.Fatalf("client %+v", cl)
	}
	got := make([]byte, 11)
	if _, err := io.ReadFull(cl.Conn, got); err != nil || string(got) != "Q-pipelined" {
		t.Fatalf("replayed %q, %v", got, err)
	}

	// Without DeferAuthOK the answer is AuthenticationOk.
	cfg := quick(hsUsers)
	cfg.DeferAuthOK = false
	out, step = NewHandshake(cfg).Feed(in)
	if step != StepDone || !bytes.Equal(out, []byte{'R', 0, 0, 0, 8, 0, 0, 0, 0}) {
		t.Fatalf("step %d out %q", step, out)
	}
}

func TestHandshakeMD5(t *testing.T) {
	for _, user := range []string{"mia", "hash"} {
		h := NewHandshake(quick(hsUsers))
		out, step := feed(t, h, packet(protocol30, params("user", user)...))
		msgs := backend(t, out)
		if step != StepMore || len(msgs) != 1 {
			t.Fatalf("%s: step %d, %T", user, step, msgs)
		}
		salt := msgs[0].(*pgproto3.AuthenticationMD5Password).Salt
		out, step = feed(t, h, passwordMsg(user, "pw", salt))
		if step != StepDone || len(out) != 0 {
			t.Fatalf("%s: right password: step %d out %q", user, step, out)
		}

		h = NewHandshake(quick(hsUsers))
		out, _ = h.Feed(packet(protocol30, params("user", user)...))
		salt = backend(t, out)[0].(*pgproto3.AuthenticationMD5Password).Salt
		out, step = h.Feed(passwordMsg(user, "wrong", salt))
		if step != StepFail || !IsAuthFailure(h.Err()) {
			t.Fatalf("%s: wrong password: step %d err %v", user, step, h.Err())
		}
		e := backend(t, out)[0].(*pgproto3.ErrorResponse)
		if e.Code != CodeInvalidPassword || e.Message != `password authentication failed for user "`+user+`"` {
			t.Fatalf("%s: wrong password answered %+v", user, e)
		}

		// The right answer with bytes after it is refused, as PostgreSQL
		// refuses it.
		h = NewHandshake(quick(hsUsers))
		out, _ = h.Feed(packet(protocol30, params("user", user)...))
		salt = backend(t, out)[0].(*pgproto3.AuthenticationMD5Password).Salt
		m := passwordMsg(user, "pw", salt)
		m = append(m, "more\x00"...)
		binary.BigEndian.PutUint32(m[1:5], uint32(len(m)-1))
		out, step = h.Feed(m)
		if e := backend(t, out)[0].(*pgproto3.ErrorResponse); step != StepFail || e.Code != CodeProtocolViolation || e.Message != "invalid password packet size" {
			t.Fatalf("%s: trailing bytes: step %d %+v", user, step, e)
		}
	}
}

func TestHandshakeAuthEnds(t *testing.T) {
	start := func() *Handshake {
		h := NewHandshake(quick(hsUsers))
		if _, step := h.Feed(packet(protocol30, params("user", "mia")...)); step != StepMore {
			t.Fatal("no md5 challenge")
		}
		return h
	}
	h := start()
	if out, step := h.Feed([]byte{'X', 0, 0, 0, 4}); step != StepFail || len(out) != 0 || h.Err() != io.EOF {
		t.Fatalf("Terminate: step %d out %q err %v; want a quiet end", step, out, h.Err())
	}
	h = start()
	q, _ := (&pgproto3.Query{String: "select 1"}).Encode(nil)
	out, step := h.Feed(q)
	if e := backend(t, out)[0].(*pgproto3.ErrorResponse); step != StepFail || e.Code != CodeProtocolViolation ||
		e.Message != "expected password response, got message type 81" {
		t.Fatalf("Query: step %d %+v", step, e)
	}
	h = start()
	out, step = h.Feed([]byte{'p', 0x7f, 0, 0, 0})
	if e := backend(t, out)[0].(*pgproto3.ErrorResponse); step != StepFail || e.Message != "invalid password packet size" {
		t.Fatalf("huge password: step %d %+v", step, e)
	}
}

func TestHandshakeSSLAndGSSRequests(t *testing.T) {
	startup := packet(protocol30, params("user", "tina")...)
	h := NewHandshake(quick(hsUsers))
	out, step := feed(t, h, append(append(packet(codeGSSENCRequest), packet(codeSSLRequest)...), startup...))
	if step != StepDone || string(out) != "NN" {
		t.Fatalf("GSSENC, SSL, startup: step %d out %q", step, out)
	}
	for name, tc := range map[string]struct {
		in   [][]byte // one Feed each
		want string
	}{
		"second SSLRequest":        {[][]byte{packet(codeSSLRequest), packet(codeSSLRequest)}, "unsupported frontend protocol 1234.5679: server supports 3.0 to 3.0"},
		"second GSSENCRequest":     {[][]byte{packet(codeGSSENCRequest), packet(codeGSSENCRequest)}, "unsupported frontend protocol 1234.5680: server supports 3.0 to 3.0"},
		"data after SSLRequest":    {[][]byte{append(packet(codeSSLRequest), startup...)}, "received unencrypted data after SSL request"},
		"data after GSSENCRequest": {[][]byte{append(packet(codeGSSENCRequest), startup...)}, "received unencrypted data after GSSAPI encryption request"},
		"long SSLRequest":          {[][]byte{packet(codeSSLRequest, 0)}, "unexpected SSLRequest"},
	} {
		h := NewHandshake(quick(hsUsers))
		var out []byte
		var step Step
		for _, in := range tc.in {
			var o []byte
			o, step = h.Feed(in)
			out = append(out, o...)
		}
		msgs := backend(t, bytes.TrimPrefix(out, []byte("N")))
		if step != StepFail || len(msgs) != 1 || msgs[0].(*pgproto3.ErrorResponse).Message != tc.want {
			t.Errorf("%s: step %d out %q", name, step, out)
		}
	}
}

func TestHandshakeCancel(t *testing.T) {
	h := NewHandshake(quick(hsUsers))
	_, step := feed(t, h, packet(codeCancelRequest, 0, 0, 0, 42, 1, 2, 3, 4))
	if c := h.Startup().Cancel; step != StepCancel || c == nil || c.PID != 42 || !bytes.Equal(c.Secret, []byte{1, 2, 3, 4}) {
		t.Fatalf("step %d cancel %+v", step, h.Startup().Cancel)
	}
}

// Anything Handshake does not do goes to Accept with every byte it needs,
// and nothing answered twice.
func TestHandshakeHandsOverToAccept(t *testing.T) {
	tlsCfg := quick(hsUsers)
	tlsCfg.TLS, _ = testTLS(t)
	noQuick := quick(hsUsers)
	noQuick.QuickCredentials = nil
	for name, tc := range map[string]struct {
		cfg    *ServerConfig
		in     []byte
		answer string // what Handshake sends before handing over
		replay []byte
	}{
		"unknown user":        {quick(hsUsers), packet(protocol30, params("user", "nobody")...), "", packet(protocol30, params("user", "nobody")...)},
		"empty md5 secret":    {quick(hsUsers), packet(protocol30, params("user", "empty")...), "", packet(protocol30, params("user", "empty")...)},
		"no QuickCredentials": {noQuick, packet(protocol30, params("user", "tina")...), "", packet(protocol30, params("user", "tina")...)},
		"SSLRequest with TLS": {tlsCfg, packet(codeSSLRequest), "", packet(codeSSLRequest)},
		"protocol 2":          {quick(hsUsers), packet(2<<16, params("user", "tina")...), "", packet(2<<16, params("user", "tina")...)},
		"bad length":          {quick(hsUsers), []byte{0, 0, 0, 3, 0, 0, 0, 0}, "", []byte{0, 0, 0, 3, 0, 0, 0, 0}},
		"direct TLS":          {tlsCfg, []byte{0x16, 3, 1, 0, 5}, "", []byte{0x16, 3, 1, 0, 5}},
		"required TLS":        {func() *ServerConfig { c := quick(hsUsers); c.RequireTLS = true; return c }(), packet(protocol30, params("user", "tina")...), "", packet(protocol30, params("user", "tina")...)},
	} {
		h := NewHandshake(tc.cfg)
		out, step := h.Feed(tc.in)
		if step != StepAccept || string(out) != tc.answer || !bytes.Equal(h.Replay(), tc.replay) {
			t.Errorf("%s: step %d out %q replay %q; want StepAccept, %q, %q", name, step, out, h.Replay(), tc.answer, tc.replay)
		}
	}
	// After a GSSENCRequest answered 'N', an unknown user's startup is
	// handed over too (sent after the answer, as PostgreSQL requires).
	gh := NewHandshake(quick(hsUsers))
	if out, step := gh.Feed(packet(codeGSSENCRequest)); step != StepMore || string(out) != "N" {
		t.Fatalf("GSSENCRequest: step %d out %q", step, out)
	}
	nobody := packet(protocol30, params("user", "nobody")...)
	if out, step := gh.Feed(nobody); step != StepAccept || len(out) != 0 || !bytes.Equal(gh.Replay(), nobody) {
		t.Errorf("after GSSENCRequest: step %d out %q replay %q", step, out, gh.Replay())
	}

	// Accept then runs the exchange from the replayed bytes: here the
	// user is unknown to QuickCredentials but trusted by Credentials.
	cfg := quick(map[string]Credential{})
	cfg.Credentials = users(map[string]Credential{"late": {Method: AuthTrust}})
	h := NewHandshake(cfg)
	if _, step := h.Feed(packet(protocol30, params("user", "late", "database", "d")...)); step != StepAccept {
		t.Fatalf("step %d", step)
	}
	a, b := net.Pipe()
	defer b.Close()
	go io.Copy(io.Discard, b)
	cl, _, err := Accept(context.Background(), WithPrefix(a, bytes.Clone(h.Replay())), cfg)
	if err != nil || cl.Startup.Params["user"] != "late" || cl.Startup.Params["database"] != "d" {
		t.Fatalf("Accept after the hand-over: %+v, %v", cl, err)
	}
	a.Close()
}

// scramClient computes the client's side of SCRAM-SHA-256 for Handshake.
func scramClient(t *testing.T, password, clientBare, serverFirst string) (final []byte, serverSig string) {
	t.Helper()
	var nonce, salt string
	iter := 0
	for _, a := range strings.Split(serverFirst, ",") {
		switch {
		case strings.HasPrefix(a, "r="):
			nonce = a[2:]
		case strings.HasPrefix(a, "s="):
			salt = a[2:]
		case strings.HasPrefix(a, "i="):
			iter, _ = strconv.Atoi(a[2:])
		}
	}
	rawSalt, _ := base64.StdEncoding.DecodeString(salt)
	salted, err := pbkdf2.Key(sha256.New, password, rawSalt, iter, 32)
	if err != nil {
		t.Fatal(err)
	}
	mac := func(key []byte, msg string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	clientKey := mac(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	withoutProof := "c=biws,r=" + nonce
	auth := clientBare + "," + serverFirst + "," + withoutProof
	proof := mac(stored[:], auth)
	for i := range proof {
		proof[i] ^= clientKey[i]
	}
	final, _ = (&pgproto3.SASLResponse{Data: []byte(withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof))}).Encode(nil)
	return final, "v=" + base64.StdEncoding.EncodeToString(mac(mac(salted, "Server Key"), auth))
}

func TestHandshakeSCRAM(t *testing.T) {
	first, _ := (&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=,r=abc")}).Encode(nil)
	for _, tc := range []struct {
		user, password string
		ok             bool
	}{
		{"sam", "pw", true}, {"ver", "pw", true}, {"md5ver", "pw", true},
		{"sam", "wrong", false}, {"ver", "wrong", false},
		{"scrmd5", "pw", false}, // an md5 secret cannot serve SCRAM: the exchange runs, then 28P01
	} {
		h := NewHandshake(quick(hsUsers))
		out, step := feed(t, h, packet(protocol30, params("user", tc.user)...))
		if sasl, ok := backend(t, out)[0].(*pgproto3.AuthenticationSASL); step != StepMore || !ok || sasl.AuthMechanisms[0] != "SCRAM-SHA-256" {
			t.Fatalf("%s: step %d, %q", tc.user, step, out)
		}
		out, step = feed(t, h, first)
		cont, ok := backend(t, out)[0].(*pgproto3.AuthenticationSASLContinue)
		if step != StepMore || !ok {
			t.Fatalf("%s: after the first message: step %d, %q", tc.user, step, out)
		}
		final, wantSig := scramClient(t, tc.password, "n=,r=abc", string(cont.Data))
		out, step = feed(t, h, final)
		if !tc.ok {
			if e, _ := backend(t, out)[0].(*pgproto3.ErrorResponse); step != StepFail || !IsAuthFailure(h.Err()) || e == nil ||
				e.Message != `password authentication failed for user "`+tc.user+`"` {
				t.Fatalf("%s with %q: step %d, %q, %v", tc.user, tc.password, step, out, h.Err())
			}
			continue
		}
		fin, ok := backend(t, out)[0].(*pgproto3.AuthenticationSASLFinal)
		if step != StepDone || !ok || string(fin.Data) != wantSig {
			t.Fatalf("%s: step %d, %q; want StepDone and %s", tc.user, step, out, wantSig)
		}
	}
}
