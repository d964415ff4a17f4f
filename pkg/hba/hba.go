// Package hba reads host-based authentication rules in PostgreSQL's
// pg_hba.conf format and picks the rule for a connecting client, so that
// a proxy chooses each client's authentication method (trust, md5,
// scram-sha-256, password, peer, cert or reject) by connection type, database, user and address
// as the server itself would: the first matching line wins, and a client
// no line matches is refused.
package hba

import (
	"fmt"
	"net/netip"
	"slices"
)

// Method is a line's authentication method.
type Method string

// The methods a rule may name; Parse refuses the others.
const (
	Trust  Method = "trust"
	Reject Method = "reject"
	MD5    Method = "md5"           // md5, or SCRAM when the stored secret is a SCRAM verifier (PostgreSQL's rule)
	SCRAM  Method = "scram-sha-256" // SCRAM only: an md5 secret cannot pass
	// Password: the client sends its password in clear (over TLS only
	// where the line is hostssl), checked against the stored secret.
	Password Method = "password"
	// Peer (local lines only): the client's operating-system user, which
	// the server reads from the socket, must be the database user asked
	// for (no user name maps).
	Peer Method = "peer"
	// Cert (hostssl lines only): the client's verified TLS certificate
	// must name the database user as its common name (no user name maps).
	Cert Method = "cert"
)

// ClientCert is a hostssl line's clientcert option ("": none asked for).
type ClientCert string

// The clientcert values.
const (
	VerifyCA   ClientCert = "verify-ca"
	VerifyFull ClientCert = "verify-full"
)

// ConnType is the first field of a line.
type ConnType string

// Connection types. GSS encryption is never used, so hostgssenc lines never
// match and hostnogssenc lines match every TCP client.
const (
	Local        ConnType = "local"
	Host         ConnType = "host"
	HostSSL      ConnType = "hostssl"
	HostNoSSL    ConnType = "hostnossl"
	HostGSSEnc   ConnType = "hostgssenc"
	HostNoGSSEnc ConnType = "hostnogssenc"
)

// Rule is one line.
type Rule struct {
	Line      int // in its file, for messages
	Type      ConnType
	Databases []name // empty never: "all" is a keyword name
	Users     []name
	allAddrs  bool
	Prefix    netip.Prefix // when not all addresses (host lines)
	Method    Method
	// ClientCert is the line's clientcert option: a client certificate
	// the CA file verifies is required before the method runs, and with
	// VerifyFull its common name must be the user.
	ClientCert ClientCert
	// ClientNameDN is the line's clientname=DN: the certificate's name
	// that cert and clientcert=verify-full check (or map) is its subject's
	// distinguished name (DN) rather than its common name.
	ClientNameDN bool
	// Map is the line's map option: a user name map of Rules.Idents
	// decides which system user (peer) or certificate name (cert,
	// clientcert=verify-full) may be which database user; "": the same
	// name.
	Map string
	// Unsupported marks a local line with a method qprouter cannot run
	// (peer, ident, ...): Parse keeps it for CheckLocal to judge.
	Unsupported bool
}

// name is a database or user field's item: a keyword unquoted, or a name.
type name struct {
	text    string
	keyword bool // all, sameuser, samerole, samegroup, replication
}

// Client is what a rule looks at.
type Client struct {
	Database, User string
	Addr           netip.Addr // the client's IP address; invalid for a Unix socket
	TLS            bool
}

// Rules are the lines of a file in order.
type Rules struct {
	File  string
	Rules []Rule
	// Notes are things worth a warning (lines that can never match).
	Notes []string
	// Idents are the user name maps the lines' map options name (an
	// ident file; nil: none).
	Idents *Idents
}

// Match returns the first rule that applies to c, or false when none does.
func (r *Rules) Match(c Client) (Rule, bool) {
	for _, rule := range r.Rules {
		if rule.matches(c) {
			return rule, true
		}
	}
	return Rule{}, false
}

func (rule *Rule) matches(c Client) bool {
	local := !c.Addr.IsValid()
	switch rule.Type {
	case Local:
		if !local {
			return false
		}
	case Host, HostNoGSSEnc:
		if local {
			return false
		}
	case HostSSL:
		if local || !c.TLS {
			return false
		}
	case HostNoSSL:
		if local || c.TLS {
			return false
		}
	default: // hostgssenc
		return false
	}
	if !local && !rule.allAddrs && !rule.Prefix.Contains(c.Addr.Unmap()) {
		return false
	}
	return slices.ContainsFunc(rule.Databases, func(n name) bool {
		if !n.keyword {
			return n.text == c.Database
		}
		switch n.text {
		case "all":
			return true
		case "sameuser":
			return c.Database == c.User
		}
		return false // replication: qprouter takes no replication connections
	}) && slices.ContainsFunc(rule.Users, func(n name) bool {
		return n.text == c.User || n.keyword && n.text == "all"
	})
}

// NoEntry is PostgreSQL's refusal of a client no line matches.
func NoEntry(c Client) string {
	return fmt.Sprintf("no pg_hba.conf entry for host \"%s\", user \"%s\", database \"%s\", %s", host(c), c.User, c.Database, encryption(c))
}

// Rejected is PostgreSQL's refusal of a client a reject line matches.
func Rejected(c Client) string {
	return fmt.Sprintf("pg_hba.conf rejects connection for host \"%s\", user \"%s\", database \"%s\", %s", host(c), c.User, c.Database, encryption(c))
}

func host(c Client) string {
	if !c.Addr.IsValid() {
		return "[local]"
	}
	return c.Addr.Unmap().String()
}

func encryption(c Client) string {
	if c.TLS {
		return "SSL encryption"
	}
	return "no encryption"
}

// CheckLocal judges the local lines for a server that takes (unix true)
// or does not take Unix-socket clients: with them, a local line with a
// method qprouter cannot run is an error; without them, local lines never
// match, which is a note.
func (r *Rules) CheckLocal(unix bool) error {
	for _, rule := range r.Rules {
		switch {
		case rule.Type != Local:
		case !unix:
			r.Notes = append(r.Notes, fmt.Sprintf("%s:%d: local lines never match: no Unix-socket clients are served (no unix socket directory)", r.File, rule.Line))
			return nil
		case rule.Unsupported:
			return fmt.Errorf("%s:%d: %w", r.File, rule.Line, unsupported(string(rule.Method)))
		}
	}
	return nil
}

func unsupported(method string) error {
	return fmt.Errorf("authentication method %s is not supported: use trust, reject, md5, scram-sha-256 or password (peer on local lines, cert on hostssl lines)", method)
}

// NeedsSecrets reports whether some rule asks for a password, and the
// first such line.
func (r *Rules) NeedsSecrets() (bool, int) {
	line := r.First(MD5, SCRAM, Password)
	return line > 0, line
}

// FirstCertLine is the line of the first rule that checks client
// certificates (method cert or a clientcert option), 0 for none.
func (r *Rules) FirstCertLine() int {
	for _, rule := range r.Rules {
		if rule.Method == Cert || rule.ClientCert != "" {
			return rule.Line
		}
	}
	return 0
}

// First is the line of the first rule with one of methods, 0 for none.
func (r *Rules) First(methods ...Method) int {
	for _, rule := range r.Rules {
		if slices.Contains(methods, rule.Method) {
			return rule.Line
		}
	}
	return 0
}
