// Settings: ServerConfig with its defaults, the authentication methods and a user's Credential.

package pgwire

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"time"
)

// Defaults ServerConfig uses for zero fields.
const (
	DefaultStartupTimeout = 10 * time.Second
	DefaultMaxStartup     = 10_000 // PostgreSQL's MAX_STARTUP_PACKET_LENGTH
	maxAuthMessage        = 65_535 // PostgreSQL's PG_MAX_AUTH_TOKEN_LENGTH
)

// AuthMethod is how a user proves who they are. The zero value is not a
// method: a known user with it is refused as a configuration error.
type AuthMethod int

const (
	_          AuthMethod = iota
	AuthTrust             // no password
	AuthMD5               // AuthenticationMD5Password; SCRAM when the stored secret is a SCRAM verifier (as PostgreSQL does)
	AuthSCRAM             // SCRAM-SHA-256 without channel binding
	AuthReject            // refused before any exchange (28000)
	// AuthPassword is pg_hba.conf's password method: the client sends its
	// password in clear (AuthenticationCleartextPassword), checked against
	// a stored secret of any kind, as PostgreSQL does.
	AuthPassword
)

func (m AuthMethod) String() string {
	switch m {
	case AuthTrust:
		return "trust"
	case AuthMD5:
		return "md5"
	case AuthSCRAM:
		return "scram-sha-256"
	case AuthReject:
		return "reject"
	case AuthPassword:
		return "password"
	}
	return "unset"
}

// Credential is a user's method and secret. Password is the plaintext, or
// "md5" + md5hex(password + user) (usable by md5 only), or a SCRAM verifier
// in pg_authid's format
// "SCRAM-SHA-256$<iterations>:<salt base64>$<StoredKey base64>:<ServerKey base64>"
// (usable by SCRAM, and by md5 which then runs SCRAM).
type Credential struct {
	Method   AuthMethod
	Password string
}

// ServerConfig is what Accept needs. The zero value refuses every client
// (no Credentials function).
type ServerConfig struct {
	// TLS, when set, answers SSLRequest with 'S' and upgrades; nil answers 'N'.
	// "postgresql" is added to its NextProtos (on a copy) when missing.
	TLS *tls.Config
	// RequireTLS refuses a StartupMessage that did not come over TLS
	// (28000 "SSL required"). CancelRequests are accepted either way.
	RequireTLS bool
	// Credentials looks up a user's method and secret. Return ErrUnknownUser
	// for a user that does not exist; any other error refuses the client with
	// a message that does not name the cause. Nil refuses every client.
	Credentials func(user, database string) (Credential, error)
	// QuickCredentials, when set, is Credentials for a caller that must
	// not wait (Handshake, on an event loop): a known user's credential
	// when it is at hand; false for anything else (an unknown user, an
	// answer that needs an auth query), which then goes to Accept.
	QuickCredentials func(user, database string) (Credential, bool)
	// Rules, when set, picks each client's method before its credential is
	// looked up, as pg_hba.conf does: AuthTrust needs no credential,
	// AuthReject refuses with why (28000), and AuthMD5, AuthSCRAM and
	// AuthPassword take the credential's secret in place of its Method (a
	// credential of AuthReject still refuses).
	Rules func(Peer) (m AuthMethod, why string)
	// StartupTimeout bounds the whole of Accept (default DefaultStartupTimeout).
	StartupTimeout time.Duration
	// MaxStartup bounds the startup packet in bytes, not counting its
	// length word, as PostgreSQL does (default DefaultMaxStartup).
	MaxStartup int
	// DeferAuthOK leaves AuthenticationOk to Client.Welcome, so that it
	// goes out in the same write (a server that connects per transaction
	// saves a system call per client). The server must then call Welcome
	// or WriteError next.
	DeferAuthOK bool
}

func (c *ServerConfig) startupTimeout() time.Duration {
	if c.StartupTimeout > 0 {
		return c.StartupTimeout
	}
	return DefaultStartupTimeout
}

func (c *ServerConfig) maxStartup() int {
	if c.MaxStartup > 0 {
		return c.MaxStartup
	}
	return DefaultMaxStartup
}

// Peer is a client as ServerConfig.Rules sees it, once its StartupMessage
// came.
type Peer struct {
	Database, User string
	Addr           net.Addr // the client's address (RemoteAddr)
	TLS            bool
	// ClientCert is the client's TLS certificate when the TLS config
	// verified it (ClientCAs with VerifyClientCertIfGiven or stricter).
	ClientCert *x509.Certificate
}
