// Authentication: picking the exchange from the user's Credential; trust, reject and md5.

package pgwire

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
)

// authenticate runs the exchange for st's user, connected from addr, and
// returns nil when the client proved who it is. It does not send
// AuthenticationOk.
func authenticate(c io.ReadWriter, cfg *ServerConfig, st *Startup, addr net.Addr) error {
	user, db := st.Params["user"], st.Params["database"]
	var ruled AuthMethod // the method Rules picked, if any
	if cfg.Rules != nil {
		m, why := cfg.Rules(Peer{Database: db, User: user, Addr: addr, TLS: st.TLS, ClientCert: st.clientCert})
		switch m {
		case AuthTrust:
			return nil
		case AuthMD5, AuthSCRAM, AuthPassword:
			ruled = m
		default:
			if why == "" {
				why = fmt.Sprintf("connection rejected for user \"%s\", database \"%s\"", user, db)
			}
			return reply(c, fatal(CodeInvalidAuthorization, "%s", why))
		}
	}
	if cfg.Credentials == nil {
		return reply(c, fatal(CodeInvalidAuthorization, "no authentication is configured for user \"%s\"", user))
	}
	cred, err := cfg.Credentials(user, db)
	known := true
	switch {
	case errors.Is(err, ErrUnknownUser):
		known = false
	case err != nil:
		e := fatal(CodeInvalidAuthorization, "could not look up user \"%s\"", user)
		e.Err = err
		return reply(c, e)
	}
	method := cred.Method
	if ruled != 0 && method != AuthReject {
		method = ruled
	}
	if !known && (method == 0 || method == AuthTrust || method == AuthReject) {
		method = AuthSCRAM
	}
	switch method {
	case AuthTrust:
		return nil
	case AuthReject:
		return reply(c, fatal(CodeInvalidAuthorization, "connection rejected for user \"%s\", database \"%s\"", user, db))
	case AuthMD5:
		// A SCRAM verifier cannot do md5, and an unknown user gets the
		// mock exchange PostgreSQL gives it under md5 rules with its
		// default password_encryption: SCRAM, so that the first message
		// does not tell whether the user exists.
		if !known || isSCRAMVerifier(cred.Password) {
			return authSCRAM(c, user, cred.Password, known, endPoint(st.cert))
		}
		return authMD5(c, user, cred.Password, known)
	case AuthSCRAM:
		return authSCRAM(c, user, cred.Password, known, endPoint(st.cert))
	case AuthPassword:
		return authPassword(c, user, cred.Password, known)
	}
	return reply(c, fatal(CodeInvalidAuthorization, "no valid authentication method for user \"%s\"", user))
}

// passwordFailed is the one refusal of a wrong password, an unknown user
// or a secret that cannot serve the method.
func passwordFailed(user string, cause error) *Error {
	e := fatal(CodeInvalidPassword, "password authentication failed for user \"%s\"", user)
	e.Err = cause
	return e
}

// authFailed sends passwordFailed's refusal.
func authFailed(c io.Writer, user string, cause error) error {
	return reply(c, passwordFailed(user, cause))
}

var (
	errWrongPassword = errors.New("wrong password")
	errNoSecret      = errors.New("the stored secret cannot serve this method")
	errEmptyPassword = errors.New("empty password")
)

// authMD5 runs AuthenticationMD5Password. stored is the plaintext or
// "md5"+md5hex(password+user); an unknown user gets the same exchange.
func authMD5(c io.ReadWriter, user, stored string, known bool) error {
	var salt [4]byte
	rand.Read(salt[:])
	if err := send(c, &pgproto3.AuthenticationMD5Password{Salt: salt}); err != nil {
		return err
	}
	body, err := readAuth(c, false)
	if err != nil {
		return err
	}
	password, perr := passwordPacket(body)
	if perr != nil {
		return reply(c, perr)
	}
	if !known {
		return authFailed(c, user, ErrUnknownUser)
	}
	if cause := checkMD5(user, stored, salt, password); cause != nil {
		return authFailed(c, user, cause)
	}
	return nil
}

// authPassword runs AuthenticationCleartextPassword: the client sends its
// password as is (pg_hba.conf's password method), checked against the
// stored secret whatever its kind; an unknown user gets the same exchange.
func authPassword(c io.ReadWriter, user, stored string, known bool) error {
	if err := send(c, &pgproto3.AuthenticationCleartextPassword{}); err != nil {
		return err
	}
	body, err := readAuth(c, false)
	if err != nil {
		return err
	}
	password, perr := passwordPacket(body)
	if perr != nil {
		return reply(c, perr)
	}
	if !known {
		return authFailed(c, user, ErrUnknownUser)
	}
	if cause := checkPlain(user, stored, password); cause != nil {
		return authFailed(c, user, cause)
	}
	return nil
}

// passwordPacket reads a PasswordMessage's body (a cleartext password or
// an md5 response) as PostgreSQL's recv_password_packet does: exactly one
// string filling the packet, and not empty (libpq sends nothing rather
// than an empty password, so an empty one is a client's mistake worth
// naming).
func passwordPacket(body []byte) (string, *Error) {
	var pm pgproto3.PasswordMessage
	if err := pm.Decode(body); err != nil || len(pm.Password)+1 != len(body) {
		return "", &Error{Severity: "FATAL", Code: CodeProtocolViolation, Message: "invalid password packet size", Err: err}
	}
	if pm.Password == "" {
		return "", fatal(CodeInvalidPassword, "empty password returned by client")
	}
	return pm.Password, nil
}

// checkPlain checks a cleartext password against the stored secret
// (plaintext, "md5"+md5hex(password+user) or a SCRAM verifier, which costs
// one PBKDF2 of the verifier's iterations, as in PostgreSQL); nil when it
// matches.
func checkPlain(user, stored, password string) error {
	var want, got []byte
	switch {
	case isSCRAMVerifier(stored):
		sec, err := parseSCRAMVerifier(stored)
		if err != nil {
			return err
		}
		want, got = sec.storedKey, deriveSCRAM(password, sec.salt, sec.iterations).storedKey
	case isMD5Secret(stored):
		want, got = []byte(strings.ToLower(stored)), []byte(MD5Secret(user, password))
	case stored == "":
		return errEmptyPassword
	default:
		want, got = []byte(stored), []byte(password)
	}
	if subtle.ConstantTimeCompare(want, got) != 1 {
		return errWrongPassword
	}
	return nil
}

// checkMD5 checks an md5 password response against the stored secret
// (plaintext or "md5"+md5hex(password+user)); nil when it matches.
func checkMD5(user, stored string, salt [4]byte, response string) error {
	var inner string // md5hex(password + user)
	switch {
	case isMD5Secret(stored):
		inner = strings.ToLower(stored[3:])
	case isSCRAMVerifier(stored):
		return errNoSecret
	case stored == "":
		return errEmptyPassword
	default:
		inner = md5hex(stored + user)
	}
	want := "md5" + md5hex(inner+string(salt[:]))
	if subtle.ConstantTimeCompare([]byte(want), []byte(response)) != 1 {
		return errWrongPassword
	}
	return nil
}

// MD5Secret is the secret md5 authentication stores for a user:
// "md5" + md5hex(password + user), as in pg_authid.
func MD5Secret(user, password string) string { return "md5" + md5hex(password+user) }

// isMD5Secret tells an md5 hash from a plaintext password as PostgreSQL
// does: "md5" and 32 lowercase hex digits (anything else is plaintext).
func isMD5Secret(s string) bool {
	if len(s) != 35 || !strings.HasPrefix(s, "md5") {
		return false
	}
	for i := 3; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// wrongAuthMessage is PostgreSQL's refusal of a message other than the
// authentication response it waits for.
func wrongAuthMessage(sasl bool, typ byte) *Error {
	what := "password"
	if sasl {
		what = "SASL"
	}
	return fatal(CodeProtocolViolation, "expected %s response, got message type %d", what, typ)
}

// readAuth reads one authentication response ('p') with exact reads, so
// nothing after it is consumed. A Terminate or the end of the stream is
// returned as io.EOF, quietly: psql hangs up to prompt for a password.
func readAuth(r io.ReadWriter, sasl bool) ([]byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err // io.EOF when the client hung up between messages
	}
	n := int64(binary.BigEndian.Uint32(hdr[1:]))
	if hdr[0] == 'X' && n == 4 {
		return nil, io.EOF
	}
	if hdr[0] != 'p' {
		return nil, reply(r, wrongAuthMessage(sasl, hdr[0]))
	}
	if n < 4 || n-4 > maxAuthMessage {
		return nil, reply(r, fatal(CodeProtocolViolation, "invalid password packet size"))
	}
	body := make([]byte, n-4)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, unexpectedEOF(err)
	}
	return body, nil
}
