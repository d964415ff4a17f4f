// Host-based authentication rules (--auth-hba-file): each client's method by database, user, address and TLS.

package proxyserver

import (
	"net"
	"os/user"
	"strconv"

	"github.com/qpkit/qpkit/pkg/hba"
	"github.com/qpkit/qpkit/pkg/pgwire"
)

// loadHBA reads c's HBA file ("": none). A rule that asks for a password
// needs somewhere to take passwords from.
func loadHBA(c Config) (*hba.Rules, error) {
	if c.AuthHBAFile == "" {
		return nil, nil
	}
	rs, err := hba.Load(c.AuthHBAFile)
	if err != nil {
		return nil, configError(err)
	}
	if c.AuthIdentFile != "" {
		if rs.Idents, err = hba.LoadIdent(c.AuthIdentFile); err != nil {
			return nil, configError(err)
		}
	}
	err = rs.Check(hba.Server{UnixSocket: c.UnixSocketDir != "",
		Secrets: c.passwordSource(), SecretsHint: "give --auth-file or --auth-user (or a database's auth_user) to take passwords from",
		CA: c.TLSCAFile != "", CAHint: "give --tls-ca-file to verify them with",
		IdentHint: "give --auth-ident-file with the user name maps"})
	if err != nil {
		return nil, configError(err)
	}
	return rs, nil
}

// rules is pgwire's Rules: the HBA file's decision for each client, by
// the rules in force (a reload swaps them).
func (s *Server) rules() func(pgwire.Peer) (pgwire.AuthMethod, string) {
	return pgwire.HBARules(func() *hba.Rules {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.hba
	}, peerUser)
}

// peerUser is the operating-system user of the process at the other end
// of a Unix-socket client; false when the socket did not say or the user
// id has no name.
func peerUser(a net.Addr) (string, bool) {
	pa, ok := a.(*peerAddr)
	if !ok || !pa.known {
		return "", false
	}
	u, err := user.LookupId(strconv.Itoa(pa.uid))
	if err != nil {
		return "", false
	}
	return u.Username, true
}
