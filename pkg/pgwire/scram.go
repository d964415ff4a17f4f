// SCRAM-SHA-256 server side (RFC 5802, RFC 7677) as PostgreSQL runs it: no channel binding.

package pgwire

import (
	"bytes"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"
	"golang.org/x/text/secure/precis"
)

const (
	scramMechanism  = "SCRAM-SHA-256"
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

// normalizePassword is SASLprep as pgx and libpq apply it: PRECIS
// OpaqueString (RFC 8265, SASLprep's successor), falling back to the raw
// bytes when the password is not valid under it, as PostgreSQL does.
// ASCII passwords without control characters are unchanged either way.
func normalizePassword(p string) string {
	ascii := true
	for i := 0; i < len(p); i++ {
		if p[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii || !utf8.ValidString(p) {
		return p
	}
	if n, err := precis.OpaqueString.String(p); err == nil {
		return n
	}
	return p
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
func authSCRAM(c io.ReadWriter, user, stored string, known bool) error {
	x := newSCRAMExchange(user, stored, known)
	if _, err := c.Write(x.start(nil)); err != nil {
		return err
	}
	for _, step := range []func([]byte, []byte) ([]byte, *Error){x.first, x.final} {
		body, err := readAuth(c)
		if err != nil {
			return err
		}
		out, e := step(nil, body)
		if e != nil {
			return reply(c, e)
		}
		if _, err := c.Write(out); err != nil {
			return err
		}
	}
	return nil
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
}

func newSCRAMExchange(user, stored string, known bool) *scramExchange {
	x := &scramExchange{user: user}
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
	out, _ := (&pgproto3.AuthenticationSASL{AuthMechanisms: []string{scramMechanism}}).Encode(dst)
	return out
}

// first answers the SASLInitialResponse body with SASLContinue (the
// server-first-message), appended to dst; or the refusal to send.
func (x *scramExchange) first(dst, body []byte) ([]byte, *Error) {
	mech, first, err := parseSASLInitial(body)
	if err != nil {
		return nil, &Error{Severity: "FATAL", Code: CodeProtocolViolation, Message: "invalid SASL initial response", Err: err}
	}
	if mech != scramMechanism {
		return nil, fatal(CodeProtocolViolation, "client selected an invalid SASL authentication mechanism")
	}
	cf, e := parseClientFirst(first)
	if e != nil {
		return nil, e
	}
	x.cf = cf
	nonce := make([]byte, scramNonceLen)
	rand.Read(nonce)
	x.fullNonce = cf.nonce + base64.StdEncoding.EncodeToString(nonce)
	x.serverFirst = fmt.Sprintf("r=%s,s=%s,i=%d", x.fullNonce, base64.StdEncoding.EncodeToString(x.sec.salt), x.sec.iterations)
	out, _ := (&pgproto3.AuthenticationSASLContinue{Data: []byte(x.serverFirst)}).Encode(dst)
	return out, nil
}

// final checks the SASLResponse body (the client-final-message) and
// answers SASLFinal, appended to dst; or the refusal to send (28P01 for
// a wrong proof or a doomed exchange).
func (x *scramExchange) final(dst, body []byte) ([]byte, *Error) {
	final, e := parseClientFinal(string(body), x.cf.gs2Header, x.fullNonce)
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
// then the data with its length (-1 for none, which SCRAM never sends).
func parseSASLInitial(b []byte) (mech string, data string, err error) {
	i := bytes.IndexByte(b, 0)
	if i < 0 || len(b)-i-1 < 4 {
		return "", "", errors.New("truncated")
	}
	mech = string(b[:i])
	b = b[i+1:]
	n := int32(binary.BigEndian.Uint32(b))
	if int(n) != len(b)-4 {
		return "", "", fmt.Errorf("data length %d, but %d bytes follow", n, len(b)-4)
	}
	return mech, string(b[4:]), nil
}

type clientFirst struct {
	gs2Header string // "n,," or "y,,"
	bare      string // client-first-message-bare
	nonce     string
}

func malformed(format string, args ...any) *Error {
	return fatal(CodeProtocolViolation, "malformed SCRAM message: "+format, args...)
}

// parseClientFirst reads gs2-header client-first-message-bare:
// ("n" | "y") "," [authzid] "," ["m=" ext ","] "n=" user "," "r=" nonce ["," ext ...]
func parseClientFirst(s string) (clientFirst, *Error) {
	var cf clientFirst
	switch {
	case strings.HasPrefix(s, "p"):
		return cf, fatal(CodeProtocolViolation, "channel binding is not supported: the client sent a \"p=\" gs2 header, but the server offered only SCRAM-SHA-256")
	case strings.HasPrefix(s, "n,"), strings.HasPrefix(s, "y,"):
	default:
		return cf, malformed("unexpected channel-binding flag")
	}
	rest := s[2:]
	if strings.HasPrefix(rest, "a=") {
		return cf, fatal(CodeFeatureNotSupported, "client uses authorization identity, but it is not supported")
	}
	if !strings.HasPrefix(rest, ",") {
		return cf, malformed("unexpected characters after channel-binding flag")
	}
	cf.gs2Header = s[:3]
	cf.bare = rest[1:]
	attrs := strings.Split(cf.bare, ",")
	if strings.HasPrefix(attrs[0], "m=") {
		return cf, malformed("client requires an unsupported SCRAM extension")
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

// parseClientFinal reads "c=" cbind "," "r=" nonce ["," ext ...] "," "p=" proof.
func parseClientFinal(s, gs2Header, nonce string) (clientFinal, *Error) {
	var cf clientFinal
	i := strings.LastIndex(s, ",p=")
	if i < 0 {
		return cf, malformed("missing proof")
	}
	cf.withoutProof = s[:i]
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
	if err != nil || string(cbind) != gs2Header {
		return cf, fatal(CodeProtocolViolation, "SCRAM channel binding check failed")
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
