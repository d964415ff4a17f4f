// Startup: the packets before authentication (SSLRequest, GSSENCRequest, direct TLS, CancelRequest, StartupMessage).

package pgwire

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Request codes of the startup packet (the version field).
const (
	codeCancelRequest  = 80877102
	codeSSLRequest     = 80877103
	codeGSSENCRequest  = 80877104
	protocol30         = 3 << 16
	tlsRecordHandshake = 0x16 // first byte of a TLS ClientHello: direct TLS
	alpnPostgres       = "postgresql"
)

// Startup is what a client sent before authentication.
type Startup struct {
	// Params are the StartupMessage's parameters: user, database (set to
	// user when the client sent none), application_name, options, ...
	// Protocol options ("_pq_.*") are not kept; Accept declined them.
	Params map[string]string
	TLS    bool       // the connection was upgraded to TLS
	Cancel *CancelKey // set when the client sent a CancelRequest instead
	// cert is the certificate the TLS handshake presented (for SCRAM
	// channel binding); nil without TLS or when the tls.Config chose
	// among several itself.
	cert *tls.Certificate
	// clientCert is the client's certificate when the tls.Config verified
	// it (ClientCAs), for Rules; nil otherwise.
	clientCert *x509.Certificate
}

// verifiedClient is the leaf of the client's verified certificate chain,
// nil when the client sent none or nothing verified it.
func verifiedClient(tc *tls.Conn) *x509.Certificate {
	if ch := tc.ConnectionState().VerifiedChains; len(ch) > 0 && len(ch[0]) > 0 {
		return ch[0][0]
	}
	return nil
}

// startup reads packets until a StartupMessage or a CancelRequest, upgrading
// conn to TLS on the way when asked. It returns the connection to go on with.
// Until TLS, reads go through a handshakeConn (unwrapped by accept).
func startup(conn net.Conn, cfg *ServerConfig, st *Startup) (net.Conn, error) {
	hc := newHandshakeConn(conn)
	var c net.Conn = hc
	var hdr [4]byte
	sslAsked, gssAsked := false, false
	for {
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return c, err
		}
		if hdr[0] == tlsRecordHandshake && !sslAsked && !gssAsked && cfg.TLS != nil {
			// PostgreSQL 17's direct TLS: a ClientHello instead of an SSLRequest.
			prefix := append(slices.Clone(hdr[:]), hc.take()...)
			tc, served := serverTLS(&prefixConn{Conn: conn, prefix: prefix}, cfg.TLS)
			if err := tc.Handshake(); err != nil {
				return c, &Error{Severity: "FATAL", Code: CodeProtocolViolation, Message: "TLS handshake failed", Err: err}
			}
			c, st.TLS, st.cert, sslAsked = tc, true, *served, true
			st.clientCert = verifiedClient(tc)
			if tc.ConnectionState().NegotiatedProtocol != alpnPostgres {
				return c, reply(c, fatal(CodeProtocolViolation, "received direct SSL connection request without ALPN protocol negotiation extension"))
			}
			continue
		}
		n := int(binary.BigEndian.Uint32(hdr[:])) // a huge value wraps negative on 32-bit: caught below
		// The limit is on the packet without its length word, as
		// PostgreSQL checks it.
		if n < 8 || n-4 > cfg.maxStartup() {
			return c, reply(c, fatal(CodeProtocolViolation, "invalid length of startup packet"))
		}
		body := make([]byte, n-4)
		if _, err := io.ReadFull(c, body); err != nil {
			return c, unexpectedEOF(err)
		}
		code := binary.BigEndian.Uint32(body)
		switch code {
		case codeSSLRequest:
			if sslAsked {
				return c, reply(c, unsupportedProtocol(code))
			}
			if n != 8 {
				return c, reply(c, fatal(CodeProtocolViolation, "unexpected SSLRequest"))
			}
			sslAsked = true
			if cfg.TLS == nil {
				if _, err := c.Write([]byte{'N'}); err != nil {
					return c, err
				}
				if err := noneBuffered(hc); err != nil {
					return c, err
				}
				continue
			}
			if _, err := c.Write([]byte{'S'}); err != nil {
				return c, err
			}
			if err := noneBuffered(hc); err != nil {
				return c, err
			}
			tc, served := serverTLS(conn, cfg.TLS)
			if err := tc.Handshake(); err != nil {
				return c, &Error{Severity: "FATAL", Code: CodeProtocolViolation, Message: "TLS handshake failed", Err: err}
			}
			c, st.TLS, st.cert = tc, true, *served
			st.clientCert = verifiedClient(tc)
		case codeGSSENCRequest:
			if gssAsked || st.TLS {
				return c, reply(c, unsupportedProtocol(code))
			}
			if n != 8 {
				return c, reply(c, fatal(CodeProtocolViolation, "unexpected GSSENCRequest"))
			}
			gssAsked = true
			if _, err := c.Write([]byte{'N'}); err != nil {
				return c, err
			}
			if hc.buffered() > 0 {
				return c, reply(hc, fatal(CodeProtocolViolation, "received unencrypted data after GSSAPI encryption request"))
			}
		case codeCancelRequest:
			var m pgproto3.CancelRequest
			if err := m.Decode(body); err != nil {
				return c, &Error{Severity: "FATAL", Code: CodeProtocolViolation, Message: "invalid cancel request", Err: err}
			}
			st.Cancel = &CancelKey{PID: m.ProcessID, Secret: m.SecretKey}
			return c, nil
		default:
			if code>>16 != 3 {
				return c, reply(c, unsupportedProtocol(code))
			}
			return c, startupMessage(c, code, body[4:], st)
		}
	}
}

// unsupportedProtocol is PostgreSQL's refusal of a startup code it does
// not take: another major version, or an SSLRequest or GSSENCRequest
// repeated (PostgreSQL then reads its code as a version).
func unsupportedProtocol(code uint32) *Error {
	return fatal(CodeFeatureNotSupported, "unsupported frontend protocol %d.%d: server supports 3.0 to 3.0", code>>16, code&0xffff)
}

// noneBuffered refuses bytes a client sent after an SSLRequest without
// waiting for the answer, as PostgreSQL does: over TLS they would not be
// protected (CVE-2021-23214's shape). The GSSENCRequest branch makes the
// same check, with PostgreSQL's message for it.
func noneBuffered(hc *handshakeConn) error {
	if hc.buffered() == 0 {
		return nil
	}
	return reply(hc, fatal(CodeProtocolViolation, "received unencrypted data after SSL request"))
}

// maxNameLen is PostgreSQL's NAMEDATALEN-1, the longest name it keeps.
const maxNameLen = 63

// startupMessage parses a StartupMessage's parameters and declines a newer
// minor version and protocol options with NegotiateProtocolVersion.
func startupMessage(c io.Writer, code uint32, b []byte, st *Startup) error {
	st.Params = make(map[string]string)
	var unrecognized []string
	for {
		if len(b) == 0 {
			return reply(c, fatal(CodeProtocolViolation, "invalid startup packet layout: expected terminator as last byte"))
		}
		if b[0] == 0 {
			if len(b) != 1 {
				return reply(c, fatal(CodeProtocolViolation, "invalid startup packet layout: expected terminator as last byte"))
			}
			break
		}
		k := bytes.IndexByte(b, 0)
		if k < 0 {
			return reply(c, fatal(CodeProtocolViolation, "invalid startup packet layout: expected terminator as last byte"))
		}
		name := string(b[:k])
		b = b[k+1:]
		v := bytes.IndexByte(b, 0)
		if v < 0 {
			return reply(c, fatal(CodeProtocolViolation, "invalid startup packet layout: expected terminator as last byte"))
		}
		value := string(b[:v])
		b = b[v+1:]
		if strings.HasPrefix(name, "_pq_.") {
			unrecognized = append(unrecognized, name)
			continue
		}
		st.Params[name] = value
	}
	// As PostgreSQL: the negotiation comes right after the packet is read,
	// before any check of its parameters. Its version field is the newest
	// version the server speaks in full (3.0), not just the minor number.
	if code != protocol30 || len(unrecognized) > 0 {
		if unrecognized == nil {
			unrecognized = []string{}
		}
		if err := send(c, &pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: protocol30, UnrecognizedOptions: unrecognized}); err != nil {
			return err
		}
	}
	if st.Params["user"] == "" {
		return reply(c, fatal(CodeInvalidAuthorization, "no PostgreSQL user name specified in startup packet"))
	}
	if st.Params["database"] == "" {
		st.Params["database"] = st.Params["user"]
	}
	walsender, valid := true, true
	if v, ok := st.Params["replication"]; ok {
		walsender, valid = replication(v)
	} else {
		walsender = false
	}
	if !valid {
		e := fatal(CodeInvalidParameterValue, "invalid value for parameter \"replication\": \"%s\"", st.Params["replication"])
		e.Hint = `Valid values are: "false", 0, "true", 1, "database".`
		return reply(c, e)
	}
	if walsender {
		// A walsender session (COPY BOTH, replication commands) cannot be
		// served by a pooler's ordinary server connections: refused, not
		// turned into a plain session whose commands then fail.
		return reply(c, fatal(CodeFeatureNotSupported, "replication connections are not supported"))
	}
	// PostgreSQL 15 cuts both names to NAMEDATALEN-1 bytes, so that an
	// overlong name still finds its role and database.
	for _, k := range [...]string{"user", "database"} {
		if v := st.Params[k]; len(v) > maxNameLen {
			st.Params[k] = v[:maxNameLen]
		}
	}
	return nil
}

// serverTLS is the server side of a TLS handshake on conn with cfg
// (ALPN "postgresql" added for direct TLS), and where the certificate it
// presents is kept once the handshake is done: cfg's only certificate,
// or what its GetCertificate returned. A GetConfigForClient (a server that
// swaps its CAs at a reload) has the config it returns set up the same way.
func serverTLS(conn net.Conn, cfg *tls.Config) (*tls.Conn, **tls.Certificate) {
	served := new(*tls.Certificate)
	c := servingConfig(cfg, served)
	if get := c.GetConfigForClient; get != nil {
		c.GetConfigForClient = func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			fc, err := get(h)
			if err != nil || fc == nil {
				return fc, err // nil: c itself, already set up
			}
			return servingConfig(fc, served), nil
		}
	}
	return tls.Server(conn, c), served
}

// servingConfig is a copy of cfg with ALPN "postgresql" and the served
// certificate recorded in served.
func servingConfig(cfg *tls.Config, served **tls.Certificate) *tls.Config {
	c := cfg.Clone()
	if !slices.Contains(c.NextProtos, alpnPostgres) {
		c.NextProtos = append(c.NextProtos, alpnPostgres)
	}
	switch get := c.GetCertificate; {
	case get != nil:
		c.GetCertificate = func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
			cert, err := get(h)
			*served = cert
			return cert, err
		}
	case len(c.Certificates) == 1:
		*served = &c.Certificates[0]
	}
	return c
}

// prefixConn replays bytes already read before reading the connection.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if len(p.prefix) > 0 {
		n := copy(b, p.prefix)
		p.prefix = p.prefix[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// reply sends e to the client and returns it (with a write failure joined).
func reply(w io.Writer, e *Error) error {
	msg := &pgproto3.ErrorResponse{Severity: e.Severity, SeverityUnlocalized: e.Severity, Code: e.Code, Message: e.Message, Hint: e.Hint}
	buf, err := msg.Encode(nil)
	if err == nil {
		_, err = w.Write(buf)
	}
	if err != nil {
		return errors.Join(e, err)
	}
	return e
}

// send writes backend messages in one write.
func send(w io.Writer, msgs ...pgproto3.BackendMessage) error {
	var buf []byte
	for _, m := range msgs {
		var err error
		if buf, err = m.Encode(buf); err != nil {
			return err
		}
	}
	_, err := w.Write(buf)
	return err
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// WithPrefix returns c reading prefix first: bytes a caller already
// took from c's socket (a Handshake's Replay) and now gives to Accept.
func WithPrefix(c net.Conn, prefix []byte) net.Conn {
	if len(prefix) == 0 {
		return c
	}
	return &prefixConn{Conn: c, prefix: prefix}
}

// Rebase returns sock (the same socket as the Client's Conn c, taken
// over by an event loop) replaying first the bytes the handshake read
// ahead of its last message, which c would have replayed.
func Rebase(c, sock net.Conn) net.Conn {
	if p, ok := c.(*prefixConn); ok && len(p.prefix) > 0 {
		return &prefixConn{Conn: sock, prefix: p.prefix}
	}
	return sock
}

// replication reads a startup's replication parameter as PostgreSQL
// does: "database" or a true boolean asks for a walsender session, a false
// boolean does not, anything else (the empty string too) is invalid.
func replication(v string) (walsender, valid bool) {
	if v == "database" {
		return true, true
	}
	return ParseBool(v)
}

// ParseBool reads a boolean as PostgreSQL's parse_bool: any unambiguous
// prefix of true, false, yes, no, on (2+ letters), off (2+), and 1 or 0,
// in any case, with surrounding whitespace; ok is false for anything
// else.
func ParseBool(s string) (value, ok bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return false, false
	}
	prefixOf := func(word string) bool { return len(s) <= len(word) && word[:len(s)] == s }
	switch s[0] {
	case 't':
		return true, prefixOf("true")
	case 'f':
		return false, prefixOf("false")
	case 'y':
		return true, prefixOf("yes")
	case 'n':
		return false, prefixOf("no")
	case 'o':
		if len(s) < 2 {
			return false, false
		}
		if prefixOf("on") {
			return true, true
		}
		return false, prefixOf("off")
	case '1':
		return true, s == "1"
	case '0':
		return false, s == "0"
	}
	return false, false
}
