// SCRAM-SHA-256 server side (RFC 5802, RFC 7677) as PostgreSQL runs it, with SCRAM-SHA-256-PLUS (tls-server-end-point channel binding) over TLS.

package pgwire

import (
	"bytes"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgproto3"
)

const (
	scramMechanism  = "SCRAM-SHA-256"
	scramPlus       = "SCRAM-SHA-256-PLUS"
	cbType          = "tls-server-end-point" // RFC 5929, the one PostgreSQL supports
	scramPrefix     = "SCRAM-SHA-256$"
	scramIterations = 4096 // PostgreSQL's scram_iterations default
	scramSaltLen    = 16   // PostgreSQL's SCRAM_DEFAULT_SALT_LEN
	scramNonceLen   = 18   // PostgreSQL's SCRAM_RAW_NONCE_LEN
)

// scramSecret is a SCRAM-SHA-256 verifier: what the server keeps instead of
// the password.
type scramSecret struct {
	iterations int
	salt       []byte
	storedKey  []byte // H(ClientKey)
	serverKey  []byte // HMAC(SaltedPassword, "Server Key")
}

func isSCRAMVerifier(s string) bool { return strings.HasPrefix(s, scramPrefix) }

// parseSCRAMVerifier reads pg_authid's format
// "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>" (base64).
func parseSCRAMVerifier(s string) (*scramSecret, error) {
	rest, ok := strings.CutPrefix(s, scramPrefix)
	if !ok {
		return nil, errors.New("not a SCRAM-SHA-256 verifier")
	}
	params, keys, ok := strings.Cut(rest, "$")
	iter, salt, ok1 := strings.Cut(params, ":")
	stored, server, ok2 := strings.Cut(keys, ":")
	if !ok || !ok1 || !ok2 {
		return nil, errors.New("SCRAM verifier: want SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>")
	}
	sec := &scramSecret{}
	var err error
	if sec.iterations, err = strconv.Atoi(iter); err != nil || sec.iterations < 1 {
		return nil, fmt.Errorf("SCRAM verifier: bad iteration count %q", iter)
	}
	if sec.salt, err = base64.StdEncoding.DecodeString(salt); err != nil || len(sec.salt) == 0 {
		return nil, errors.New("SCRAM verifier: bad salt")
	}
	if sec.storedKey, err = base64.StdEncoding.DecodeString(stored); err != nil || len(sec.storedKey) != sha256.Size {
		return nil, errors.New("SCRAM verifier: bad StoredKey")
	}
	if sec.serverKey, err = base64.StdEncoding.DecodeString(server); err != nil || len(sec.serverKey) != sha256.Size {
		return nil, errors.New("SCRAM verifier: bad ServerKey")
	}
	return sec, nil
}

func (s *scramSecret) String() string {
	b := base64.StdEncoding
	return fmt.Sprintf("%s%d:%s$%s:%s", scramPrefix, s.iterations, b.EncodeToString(s.salt), b.EncodeToString(s.storedKey), b.EncodeToString(s.serverKey))
}

// deriveSCRAM computes the verifier of password with salt and iterations.
func deriveSCRAM(password string, salt []byte, iterations int) *scramSecret {
	salted, err := pbkdf2.Key(sha256.New, normalizePassword(password), salt, iterations, sha256.Size)
	if err != nil {
		panic(err) // only for FIPS-refused parameters, which these are not
	}
	clientKey := hmacSHA256(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	return &scramSecret{iterations: iterations, salt: salt, storedKey: stored[:], serverKey: hmacSHA256(salted, "Server Key")}
}

// SCRAMVerifier returns the pg_authid-format SCRAM-SHA-256 verifier of
// password with a random 16-byte salt and 4096 iterations, as PostgreSQL's
// default password_encryption stores it.
func SCRAMVerifier(password string) string {
	salt := make([]byte, scramSaltLen)
	rand.Read(salt)
	return deriveSCRAM(password, salt, scramIterations).String()
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// scramCache keeps verifiers derived from plaintext passwords, so the 4096
// PBKDF2 rounds run once per (user, password) rather than once per login.
// Keys are SHA-256 digests, never the password. At cacheMax entries it
// starts over.
var scramCache = struct {
	sync.Mutex
	m map[[sha256.Size]byte]*scramSecret
}{m: make(map[[sha256.Size]byte]*scramSecret)}

const cacheMax = 10_000

func plaintextSecret(user, password string) *scramSecret {
	h := sha256.New()
	h.Write([]byte(user))
	h.Write([]byte{0})
	h.Write([]byte(password))
	var k [sha256.Size]byte
	h.Sum(k[:0])
	scramCache.Lock()
	s := scramCache.m[k]
	scramCache.Unlock()
	if s != nil {
		return s
	}
	salt := make([]byte, scramSaltLen)
	rand.Read(salt)
	s = deriveSCRAM(password, salt, scramIterations)
	scramCache.Lock()
	defer scramCache.Unlock()
	if old := scramCache.m[k]; old != nil {
		return old // another login derived it meanwhile; keep one salt
	}
	if len(scramCache.m) >= cacheMax {
		clear(scramCache.m)
	}
	scramCache.m[k] = s
	return s
}

// mockKey salts the fake verifiers of unknown users, so one user name always
// gets the same salt within a process (as PostgreSQL's mock authentication).
var mockKey = func() []byte {
	b := make([]byte, 32)
	rand.Read(b)
	return b
}()

func mockSecret(user string) *scramSecret {
	salt := hmacSHA256(mockKey, "salt\x00"+user)[:scramSaltLen]
	key := hmacSHA256(mockKey, "key\x00"+user)
	return &scramSecret{iterations: scramIterations, salt: salt, storedKey: key, serverKey: key}
}

// authSCRAM runs a SCRAM-SHA-256 exchange on c (scramExchange's steps
// with blocking reads). stored is a verifier or the plaintext; an unknown
// user gets the same exchange with a mock secret.
func authSCRAM(c io.ReadWriter, user, stored string, known bool, cb []byte) error {
	x := newSCRAMExchange(user, stored, known, cb)
	if _, err := c.Write(x.start(nil)); err != nil {
		return err
	}
	for {
		body, err := readAuth(c, true)
		if err != nil {
			return err
		}
		out, done, e := x.next(nil, body)
		if e != nil {
			return reply(c, e)
		}
		if _, err := c.Write(out); err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// scramExchange is one SCRAM-SHA-256 exchange, message by message, so
// that authSCRAM (blocking reads) and Handshake (fed bytes) share it.
type scramExchange struct {
	user        string
	sec         *scramSecret
	doomed      error // the exchange runs to its end, then fails with this
	cf          clientFirst
	serverFirst string
	fullNonce   string
	// cb is the TLS connection's channel binding data (endPoint); nil
	// without TLS, and then SCRAM-SHA-256-PLUS is not offered. plus: the
	// client chose it.
	cb   []byte
	plus bool
	// step is what the next message is: the SASLInitialResponse
	// (scramInitial), the client-first-message in a SASLResponse when
	// the initial response carried none (scramFirstData), or the
	// client-final-message (scramFinal).
	step int
}

const (
	scramInitial = iota
	scramFirstData
	scramFinal
)

// next answers the client's next authentication message body, appended
// to dst; done when that was the last (SASLFinal sent), or the refusal.
func (x *scramExchange) next(dst, body []byte) (out []byte, done bool, e *Error) {
	switch x.step {
	case scramInitial:
		out, e = x.first(dst, body)
	case scramFirstData:
		out, e = x.clientFirst(dst, string(body))
	default:
		out, e = x.final(dst, body)
		done = true
	}
	return out, done, e
}

func newSCRAMExchange(user, stored string, known bool, cb []byte) *scramExchange {
	x := &scramExchange{user: user, cb: cb}
	switch {
	case !known:
		x.doomed = ErrUnknownUser
	case isSCRAMVerifier(stored):
		s, err := parseSCRAMVerifier(stored)
		if err != nil {
			x.doomed = fmt.Errorf("%w: %v", errNoSecret, err)
		}
		x.sec = s
	case isMD5Secret(stored):
		x.doomed = errNoSecret
	case stored == "":
		x.doomed = errEmptyPassword
	default:
		x.sec = plaintextSecret(user, stored)
	}
	if x.sec == nil {
		x.sec = mockSecret(user)
	}
	return x
}

// start appends AuthenticationSASL to dst.
func (x *scramExchange) start(dst []byte) []byte {
	mechs := []string{scramMechanism}
	if x.cb != nil {
		mechs = []string{scramPlus, scramMechanism} // the stronger first, as PostgreSQL lists them
	}
	out, _ := (&pgproto3.AuthenticationSASL{AuthMechanisms: mechs}).Encode(dst)
	return out
}

// first answers the SASLInitialResponse body with SASLContinue (the
// server-first-message), appended to dst; or the refusal to send.
func (x *scramExchange) first(dst, body []byte) ([]byte, *Error) {
	mech, first, present, err := parseSASLInitial(body)
	if err != nil {
		return nil, &Error{Severity: "FATAL", Code: CodeProtocolViolation, Message: "invalid SASL initial response", Err: err}
	}
	x.plus = mech == scramPlus && x.cb != nil
	if mech != scramMechanism && !x.plus {
		return nil, fatal(CodeProtocolViolation, "client selected an invalid SASL authentication mechanism")
	}
	if !present {
		// No initial response (RFC 4422 allows it): an empty challenge,
		// answered by the client-first-message, as PostgreSQL does.
		x.step = scramFirstData
		out, _ := (&pgproto3.AuthenticationSASLContinue{}).Encode(dst)
		return out, nil
	}
	return x.clientFirst(dst, first)
}

// clientFirst answers the client-first-message with SASLContinue (the
// server-first-message), appended to dst; or the refusal to send.
func (x *scramExchange) clientFirst(dst []byte, first string) ([]byte, *Error) {
	cf, e := parseClientFirst(first, x.plus, x.cb != nil)
	if e != nil {
		return nil, e
	}
	x.cf = cf
	nonce := make([]byte, scramNonceLen)
	rand.Read(nonce)
	x.fullNonce = cf.nonce + base64.StdEncoding.EncodeToString(nonce)
	x.serverFirst = fmt.Sprintf("r=%s,s=%s,i=%d", x.fullNonce, base64.StdEncoding.EncodeToString(x.sec.salt), x.sec.iterations)
	x.step = scramFinal
	out, _ := (&pgproto3.AuthenticationSASLContinue{Data: []byte(x.serverFirst)}).Encode(dst)
	return out, nil
}

// final checks the SASLResponse body (the client-final-message) and
// answers SASLFinal, appended to dst; or the refusal to send (28P01 for
// a wrong proof or a doomed exchange).
func (x *scramExchange) final(dst, body []byte) ([]byte, *Error) {
	cbind := []byte(x.cf.gs2Header)
	if x.plus {
		cbind = append(cbind, x.cb...)
	}
	final, e := parseClientFinal(string(body), cbind, x.fullNonce)
	if e != nil {
		return nil, e
	}
	authMessage := x.cf.bare + "," + x.serverFirst + "," + final.withoutProof
	clientSig := hmacSHA256(x.sec.storedKey, authMessage)
	clientKey := make([]byte, sha256.Size)
	subtle.XORBytes(clientKey, final.proof, clientSig)
	got := sha256.Sum256(clientKey)
	if subtle.ConstantTimeCompare(got[:], x.sec.storedKey) != 1 || x.doomed != nil {
		cause := x.doomed
		if cause == nil {
			cause = errWrongPassword
		}
		return nil, passwordFailed(x.user, cause)
	}
	serverSig := hmacSHA256(x.sec.serverKey, authMessage)
	out, _ := (&pgproto3.AuthenticationSASLFinal{Data: []byte("v=" + base64.StdEncoding.EncodeToString(serverSig))}).Encode(dst)
	return out, nil
}

// parseSASLInitial splits a SASLInitialResponse body: the mechanism name,
// then the data with its length; -1 for none (present false).
func parseSASLInitial(b []byte) (mech string, data string, present bool, err error) {
	i := bytes.IndexByte(b, 0)
	if i < 0 || len(b)-i-1 < 4 {
		return "", "", false, errors.New("truncated")
	}
	mech = string(b[:i])
	b = b[i+1:]
	n := int32(binary.BigEndian.Uint32(b))
	if n == -1 && len(b) == 4 {
		return mech, "", false, nil
	}
	if int(n) != len(b)-4 {
		return "", "", false, fmt.Errorf("data length %d, but %d bytes follow", n, len(b)-4)
	}
	return mech, string(b[4:]), true, nil
}

type clientFirst struct {
	gs2Header string // "n,,", "y,," or "p=tls-server-end-point,,"
	bare      string // client-first-message-bare
	nonce     string
}

func malformed(format string, args ...any) *Error {
	return fatal(CodeProtocolViolation, "malformed SCRAM message: "+format, args...)
}

// parseClientFirst reads gs2-header client-first-message-bare:
// ("n" | "y" | "p=" cb-name) "," [authzid] "," ["m=" ext ","] "n=" user "," "r=" nonce ["," ext ...]
// plus: the client chose SCRAM-SHA-256-PLUS; offered: the server offered
// it. The checks are PostgreSQL's, a downgrade ("y" when the server
// offered channel binding) included.
func parseClientFirst(s string, plus, offered bool) (clientFirst, *Error) {
	var cf clientFirst
	comma := 1 // the end of the channel-binding flag
	switch {
	case strings.HasPrefix(s, "p="):
		if !plus {
			return cf, fatal(CodeProtocolViolation, "the client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data")
		}
		comma = strings.IndexByte(s, ',')
		if comma < 0 {
			return cf, malformed("unexpected end of channel-binding flag")
		}
		if name := s[2:comma]; name != cbType {
			return cf, fatal(CodeProtocolViolation, "unsupported SCRAM channel-binding type \"%s\"", clip(name))
		}
	case strings.HasPrefix(s, "n,"), strings.HasPrefix(s, "y,"):
		if plus {
			return cf, fatal(CodeProtocolViolation, "the client selected SCRAM-SHA-256-PLUS, but the SCRAM message does not include channel binding data")
		}
		if s[0] == 'y' && offered {
			return cf, fatal(CodeProtocolViolation, "SCRAM channel binding negotiation error: the client supports SCRAM channel binding but thinks the server does not, and this server does")
		}
	default:
		return cf, malformed("unexpected channel-binding flag")
	}
	rest := s[comma+1:]
	if strings.HasPrefix(rest, "a=") {
		return cf, fatal(CodeFeatureNotSupported, "client uses authorization identity, but it is not supported")
	}
	if !strings.HasPrefix(rest, ",") {
		return cf, malformed("unexpected characters after channel-binding flag")
	}
	cf.gs2Header = s[:comma+2]
	cf.bare = rest[1:]
	attrs := strings.Split(cf.bare, ",")
	if strings.HasPrefix(attrs[0], "m=") {
		return cf, fatal(CodeFeatureNotSupported, "client requires an unsupported SCRAM extension")
	}
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") {
		return cf, malformed("expected n= and r= attributes")
	}
	cf.nonce = attrs[1][2:]
	if cf.nonce == "" {
		return cf, malformed("empty client nonce")
	}
	for i := 0; i < len(cf.nonce); i++ {
		if ch := cf.nonce[i]; ch < 0x21 || ch > 0x7e {
			return cf, malformed("non-printable character in client nonce")
		}
	}
	for _, a := range attrs[2:] {
		if len(a) < 2 || a[1] != '=' {
			return cf, malformed("bad attribute %q", clip(a))
		}
	}
	return cf, nil
}

type clientFinal struct {
	withoutProof string
	proof        []byte
}

// parseClientFinal reads "c=" cbind "," "r=" nonce ["," ext ...] "," "p=" proof;
// cbind must be want (the gs2 header, then any channel binding data).
func parseClientFinal(s string, want []byte, nonce string) (clientFinal, *Error) {
	var cf clientFinal
	// The first p= is the proof, and it ends the message, as PostgreSQL
	// reads it (no attribute value before it can hold a comma).
	i := strings.Index(s, ",p=")
	if i < 0 {
		return cf, malformed("missing proof")
	}
	cf.withoutProof = s[:i]
	if strings.IndexByte(s[i+3:], ',') >= 0 {
		return cf, malformed("garbage found at the end of client-final-message")
	}
	proof, err := base64.StdEncoding.DecodeString(s[i+3:])
	if err != nil || len(proof) != sha256.Size {
		return cf, malformed("invalid proof")
	}
	cf.proof = proof
	attrs := strings.Split(cf.withoutProof, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "c=") || !strings.HasPrefix(attrs[1], "r=") {
		return cf, malformed("expected c= and r= attributes")
	}
	cbind, err := base64.StdEncoding.DecodeString(attrs[0][2:])
	if err != nil || !bytes.Equal(cbind, want) {
		// PostgreSQL's codes: with channel binding in use a mismatch is an
		// authorization failure, without it a protocol error.
		if bytes.HasPrefix(want, []byte("p=")) {
			return cf, fatal(CodeInvalidAuthorization, "SCRAM channel binding check failed")
		}
		return cf, fatal(CodeProtocolViolation, "unexpected SCRAM channel-binding attribute in client-final-message")
	}
	if subtle.ConstantTimeCompare([]byte(attrs[1][2:]), []byte(nonce)) != 1 {
		return cf, malformed("nonce does not match")
	}
	for _, a := range attrs[2:] {
		if len(a) < 2 || a[1] != '=' {
			return cf, malformed("bad attribute %q", clip(a))
		}
	}
	return cf, nil
}

func clip(s string) string {
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}

// endPoint is RFC 5929's tls-server-end-point channel binding data for
// cert: its DER hashed with the hash of its signature algorithm (SHA-256
// for MD5 and SHA-1). nil when that hash cannot be told (Ed25519, say):
// SCRAM-SHA-256-PLUS is then not offered, as PostgreSQL does not.
func endPoint(cert *tls.Certificate) []byte {
	if cert == nil || len(cert.Certificate) == 0 {
		return nil
	}
	leaf := cert.Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil
		}
	}
	var h hash.Hash
	switch leaf.SignatureAlgorithm {
	case x509.MD5WithRSA, x509.SHA1WithRSA, x509.DSAWithSHA1, x509.ECDSAWithSHA1,
		x509.SHA256WithRSA, x509.DSAWithSHA256, x509.ECDSAWithSHA256, x509.SHA256WithRSAPSS:
		h = sha256.New()
	case x509.SHA384WithRSA, x509.ECDSAWithSHA384, x509.SHA384WithRSAPSS:
		h = sha512.New384()
	case x509.SHA512WithRSA, x509.ECDSAWithSHA512, x509.SHA512WithRSAPSS:
		h = sha512.New()
	default:
		return nil
	}
	h.Write(leaf.Raw)
	return h.Sum(nil)
}
