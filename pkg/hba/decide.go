// Deciding a client's method: the matching rule, and the checks a rule makes before any password.

package hba

import (
	"crypto/x509"
	"fmt"
)

// Decide returns the method that authenticates c: Trust, MD5, SCRAM or
// Password for the exchange to run, or Reject with the refusal in
// PostgreSQL's words. The checks that need no password happen here: no
// matching line, a reject line, peer (osUser returns the client's
// operating-system user, false when unknown; nil: never known) and cert
// and clientcert (cert is the client's certificate when a CA verified it,
// else nil); the system name must be c.User, or the line's map must allow
// it. Peer and cert lines that pass come back as Trust.
func (r *Rules) Decide(c Client, cert *x509.Certificate, osUser func() (string, bool)) (Method, string) {
	rule, ok := r.Match(c)
	if !ok {
		return Reject, NoEntry(c)
	}
	if rule.ClientCert != "" {
		// Checked before the method runs; PostgreSQL checks verify-full's
		// name after it, refusing a password method with 28P01.
		switch {
		case cert == nil:
			return Reject, "connection requires a valid client certificate"
		case rule.ClientCert == VerifyFull && certName(rule, cert) == "":
			return Reject, noCertName(c)
		case rule.ClientCert == VerifyFull && !r.mapped(rule, certName(rule, cert), c.User):
			return Reject, fmt.Sprintf("certificate authentication failed for user %q", c.User)
		}
	}
	switch rule.Method {
	case Trust, MD5, SCRAM, Password:
		return rule.Method, ""
	case Peer:
		if osUser != nil {
			if name, ok := osUser(); ok && r.mapped(rule, name, c.User) {
				return Trust, ""
			}
		}
		return Reject, fmt.Sprintf("Peer authentication failed for user %q", c.User)
	case Cert:
		switch {
		case cert == nil:
			return Reject, "connection requires a valid client certificate"
		case certName(rule, cert) == "":
			return Reject, noCertName(c) // before any map, which might match ""
		case !r.mapped(rule, certName(rule, cert), c.User):
			return Reject, fmt.Sprintf("certificate authentication failed for user %q", c.User)
		}
		return Trust, ""
	}
	return Reject, Rejected(c)
}

// noCertName is PostgreSQL's refusal of a certificate without a user
// name (no CN, an empty one, or one it cannot read), in the words its
// client gets: the server's log adds "client certificate contains no
// user name".
func noCertName(c Client) string {
	return fmt.Sprintf("certificate authentication failed for user %q", c.User)
}

// certName is the certificate's name the rule checks: its common name,
// or with clientname=DN its distinguished name ("" when there is none or
// the subject does not parse: Decide refuses it).
func certName(rule Rule, cert *x509.Certificate) string {
	if !rule.ClientNameDN {
		return CommonName(cert)
	}
	dn, err := DN(cert)
	if err != nil {
		return ""
	}
	return dn
}

// mapped reports whether the system name may log in as user by rule: the
// same name without a map, else as the map allows.
func (r *Rules) mapped(rule Rule, system, user string) bool {
	if rule.Map == "" {
		return system == user
	}
	return r.Idents != nil && r.Idents.Allows(rule.Map, system, user)
}

// Server is what a server offers its rules: a Unix socket, passwords to
// check (an auth file or an auth query), a CA that verifies client
// certificates. The hints say which settings give the last two, for the
// refusals.
type Server struct {
	UnixSocket  bool
	Secrets     bool
	SecretsHint string
	CA          bool
	CAHint      string
	IdentHint   string // the setting that gives Rules.Idents
}

// Check refuses rules the server cannot honour, naming the file and line:
// a local line with a method it cannot run (CheckLocal), a password
// method without passwords, a certificate check without a CA.
func (r *Rules) Check(s Server) error {
	if err := r.CheckLocal(s.UnixSocket); err != nil {
		return err
	}
	if need, line := r.NeedsSecrets(); need && !s.Secrets {
		return fmt.Errorf("%s:%d asks for a password: %s", r.File, line, s.SecretsHint)
	}
	if line := r.FirstCertLine(); line > 0 && !s.CA {
		return fmt.Errorf("%s:%d checks client certificates (cert, clientcert): %s", r.File, line, s.CAHint)
	}
	for _, rule := range r.Rules {
		switch {
		case rule.Map == "" || rule.Unsupported:
		case r.Idents == nil:
			return fmt.Errorf("%s:%d uses map=%s: %s", r.File, rule.Line, rule.Map, s.IdentHint)
		case !r.Idents.Has(rule.Map):
			return fmt.Errorf("%s:%d uses map=%s, which %s does not define", r.File, rule.Line, rule.Map, r.Idents.File)
		}
	}
	return nil
}
