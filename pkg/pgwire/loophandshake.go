// Handshake: Accept's exchange for a caller that must not block, fed bytes and answering bytes.

package pgwire

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Step is what a Handshake wants next.
type Step int

const (
	// StepMore: send the answer, then Feed what the client sends next.
	StepMore Step = iota
	// StepDone: send the answer; the client is authenticated (Client).
	StepDone
	// StepAccept: send the answer, then run Accept on the connection
	// with Replay's bytes in front of it: the exchange needs something
	// Handshake does not do (TLS, SCRAM, an auth query, an error Accept
	// words).
	StepAccept
	// StepCancel: the client sent a CancelRequest (Startup().Cancel).
	StepCancel
	// StepFail: send the answer (an ErrorResponse, or nothing), then
	// close the connection; Err says why.
	StepFail
)

// Handshake runs the common case of Accept without ever waiting, for an
// event loop that owns many connections on one thread: a client without
// TLS whose credential QuickCredentials has at hand, authenticated by
// trust, md5 or SCRAM-SHA-256 (a plaintext secret costs one PBKDF2 per
// user and password, cached, as in Accept). Everything else (a cleartext
// password too: checking it against a SCRAM verifier costs a PBKDF2 per
// login, too long for a loop's thread) stops before the StartupMessage is
// answered and goes to Accept (StepAccept), so the rarer paths and their
// errors stay Accept's alone. The caller bounds the whole exchange with
// ServerConfig.StartupTimeout itself.
type Handshake struct {
	cfg      *ServerConfig
	in       []byte // received, not yet consumed
	st       Startup
	wait     authWait // the authentication message expected next
	secret   string   // the user's stored secret (md5)
	salt     [4]byte
	scram    *scramExchange
	ssl, gss bool // SSLRequest, GSSENCRequest answered
	err      error
	addr     net.Addr // the client's, for ServerConfig.Rules
}

// authWait is the authentication message a Handshake waits for.
type authWait int

const (
	waitNone authWait = iota
	waitMD5           // PasswordMessage, after the md5 salt
	waitSASL          // the SCRAM exchange's next message (scramExchange.step)
)

// NewHandshake starts an exchange under cfg.
func NewHandshake(cfg *ServerConfig) *Handshake { return &Handshake{cfg: cfg} }

// From sets the client's address, which ServerConfig.Rules looks at, and
// returns h.
func (h *Handshake) From(addr net.Addr) *Handshake {
	h.addr = addr
	return h
}

// Startup is what the client sent (Params once its StartupMessage came).
func (h *Handshake) Startup() *Startup { return &h.st }

// Err is the reason for StepFail.
func (h *Handshake) Err() error { return h.err }

// Replay is, after StepAccept, what Accept must read first: the client's
// bytes from the packet Handshake did not answer on.
func (h *Handshake) Replay() []byte { return h.in }

// Client is the authenticated client on conn after StepDone, with a fresh
// cancel key; bytes the client sent after its last handshake message
// come first from its Conn.
func (h *Handshake) Client(conn net.Conn) *Client {
	if len(h.in) > 0 {
		conn = &prefixConn{Conn: conn, prefix: bytes.Clone(h.in)}
		h.in = nil
	}
	return &Client{Conn: conn, Startup: h.st, Key: NewCancelKey(), authOK: h.cfg.DeferAuthOK}
}

// Feed takes the bytes the client sent since the last call and returns
// what to send it and what comes next.
func (h *Handshake) Feed(p []byte) (out []byte, step Step) {
	h.in = append(h.in, p...)
	for {
		if h.wait != waitNone {
			return h.authMessage(out)
		}
		if len(h.in) < 4 {
			return out, StepMore
		}
		if h.in[0] == tlsRecordHandshake {
			return out, StepAccept // direct TLS, or garbage: Accept's
		}
		n := int(binary.BigEndian.Uint32(h.in))
		if n < 8 || n-4 > h.cfg.maxStartup() {
			return out, StepAccept
		}
		if len(h.in) < n {
			return out, StepMore
		}
		body := h.in[4:n]
		switch code := binary.BigEndian.Uint32(body); code {
		case codeSSLRequest, codeGSSENCRequest:
			if h.cfg.TLS != nil && code == codeSSLRequest {
				return out, StepAccept
			}
			if h.ssl && code == codeSSLRequest || h.gss && code == codeGSSENCRequest {
				return h.fail(out, unsupportedProtocol(code))
			}
			if n != 8 {
				name := "SSLRequest"
				if code == codeGSSENCRequest {
					name = "GSSENCRequest"
				}
				return h.fail(out, fatal(CodeProtocolViolation, "unexpected %s", name))
			}
			h.ssl = h.ssl || code == codeSSLRequest
			h.gss = h.gss || code == codeGSSENCRequest
			h.in = h.in[n:]
			out = append(out, 'N')
			if len(h.in) > 0 {
				// Sent before the answer: PostgreSQL answers the request,
				// then refuses the bytes (see noneBuffered).
				if code == codeSSLRequest {
					return h.fail(out, fatal(CodeProtocolViolation, "received unencrypted data after SSL request"))
				}
				return h.fail(out, fatal(CodeProtocolViolation, "received unencrypted data after GSSAPI encryption request"))
			}
		case codeCancelRequest:
			var m pgproto3.CancelRequest
			if err := m.Decode(body); err != nil {
				h.err = &Error{Severity: "FATAL", Code: CodeProtocolViolation, Message: "invalid cancel request", Err: err}
				return out, StepFail
			}
			h.st.Cancel = &CancelKey{PID: m.ProcessID, Secret: m.SecretKey}
			return out, StepCancel
		default:
			return h.startupMessage(out, code, n)
		}
	}
}

// startupMessage answers a StartupMessage of n bytes at the front of in:
// trust, md5 and SCRAM here, anything else (reject, an unknown user, and
// every error but a bad layout) in Accept.
func (h *Handshake) startupMessage(out []byte, code uint32, n int) ([]byte, Step) {
	if code>>16 != 3 || h.cfg.RequireTLS || h.cfg.QuickCredentials == nil {
		return out, StepAccept
	}
	var ans bytes.Buffer
	if err := startupMessage(&ans, code, h.in[8:n], &h.st); err != nil {
		h.err = err
		return append(out, ans.Bytes()...), StepFail
	}
	answer := ans.Bytes() // NegotiateProtocolVersion, if any
	cred, ok := h.credential()
	switch {
	case !ok:
		return out, StepAccept
	case cred.Method == AuthTrust:
	case cred.Method == AuthMD5 && isSCRAMVerifier(cred.Password), cred.Method == AuthSCRAM:
		// As authenticate: md5 with a SCRAM verifier stored runs SCRAM.
		h.scram = newSCRAMExchange(h.st.Params["user"], cred.Password, true, nil) // no TLS on the loop
		answer = h.scram.start(answer)
		h.wait = waitSASL
	case cred.Method == AuthMD5 && cred.Password != "":
		rand.Read(h.salt[:])
		answer, _ = (&pgproto3.AuthenticationMD5Password{Salt: h.salt}).Encode(answer)
		h.secret, h.wait = cred.Password, waitMD5
	default:
		return out, StepAccept
	}
	h.in = h.in[n:]
	out = append(out, answer...)
	if h.wait != waitNone {
		return h.authMessage(out)
	}
	return h.done(out)
}

// credential is the client's credential with the method Rules picks for
// it, as authenticate decides; false leaves the client to Accept (a
// refusal, or a credential not at hand).
func (h *Handshake) credential() (Credential, bool) {
	user, db := h.st.Params["user"], h.st.Params["database"]
	if h.cfg.Rules == nil {
		return h.cfg.QuickCredentials(user, db)
	}
	m, _ := h.cfg.Rules(Peer{Database: db, User: user, Addr: h.addr})
	switch m {
	case AuthTrust:
		return Credential{Method: AuthTrust}, true
	case AuthMD5, AuthSCRAM, AuthPassword: // password: startupMessage leaves it to Accept
		cred, ok := h.cfg.QuickCredentials(user, db)
		if ok && cred.Method != AuthReject {
			cred.Method = m
		}
		return cred, ok
	}
	return Credential{}, false
}

// authMessage takes the authentication message once it is whole, framed
// as readAuth frames it, and runs the method's step on it.
func (h *Handshake) authMessage(out []byte) ([]byte, Step) {
	if len(h.in) < 5 {
		return out, StepMore
	}
	typ, n := h.in[0], int64(binary.BigEndian.Uint32(h.in[1:5]))
	if typ == 'X' && n == 4 {
		h.err = io.EOF // hung up to prompt for a password
		return out, StepFail
	}
	if typ != 'p' {
		return h.fail(out, wrongAuthMessage(h.wait == waitSASL, typ))
	}
	if n < 4 || n-4 > maxAuthMessage {
		return h.fail(out, fatal(CodeProtocolViolation, "invalid password packet size"))
	}
	if int64(len(h.in)) < 1+n {
		return out, StepMore
	}
	body := h.in[5 : 1+n]
	h.in = h.in[1+n:]
	switch h.wait {
	case waitSASL:
		next, done, e := h.scram.next(out, body)
		if e != nil {
			return h.fail(out, e)
		}
		if !done {
			return h.authMessage(next)
		}
		out = next
	default:
		password, perr := passwordPacket(body)
		if perr != nil {
			return h.fail(out, perr)
		}
		if cause := checkMD5(h.st.Params["user"], h.secret, h.salt, password); cause != nil {
			return h.fail(out, passwordFailed(h.st.Params["user"], cause))
		}
	}
	h.wait, h.scram = waitNone, nil
	return h.done(out)
}

func (h *Handshake) done(out []byte) ([]byte, Step) {
	if !h.cfg.DeferAuthOK {
		out = append(out, 'R', 0, 0, 0, 8, 0, 0, 0, 0) // AuthenticationOk
	}
	return out, StepDone
}

// fail appends e as an ErrorResponse.
func (h *Handshake) fail(out []byte, e *Error) ([]byte, Step) {
	var b bytes.Buffer
	WriteError(&b, e.Severity, e.Code, e.Message)
	h.err = e
	return append(out, b.Bytes()...), StepFail
}
