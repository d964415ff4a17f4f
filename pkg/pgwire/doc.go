// Package documentation: what the server side of the protocol does and what it leaves to its caller.

// Package pgwire is the server side of the PostgreSQL frontend/backend
// protocol 3.0, up to the end of authentication, plus a bounded message
// framer for relaying afterwards.
//
// Accept runs one client's startup on a net.Conn: SSLRequest (answered 'S'
// and upgraded with crypto/tls when ServerConfig.TLS is set, 'N' otherwise),
// GSSENCRequest (always 'N'), a direct TLS handshake (PostgreSQL 17's
// sslnegotiation=direct, ALPN "postgresql"), CancelRequest (returned to the
// caller, nothing is written), and the StartupMessage. It then authenticates
// the user with the method its Credential names: trust, md5, SCRAM-SHA-256
// (without channel binding) or reject. Every refusal is sent to the client as
// an ErrorResponse with PostgreSQL's SQLSTATE and returned as an *Error.
// Unknown users get the same exchange and the same message as a wrong
// password, so a client cannot tell them apart.
//
// After Accept the caller owns Client.Conn. Client.Welcome finishes the
// startup (ParameterStatus, BackendKeyData with a synthetic key,
// ReadyForQuery); a Framer then reads the client's messages one at a time.
//
// Accept never reads ahead: it reads the startup packet and every
// authentication message with exact-length reads on the connection, so no
// plaintext byte sent after an SSLRequest can be mistaken for TLS data, and
// nothing the client pipelines after its last authentication message is
// lost to a buffer the caller cannot see.
package pgwire
