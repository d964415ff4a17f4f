// Host-based authentication rules (--auth-hba-file): each client's method by database, user, address and TLS.

package proxyserver

import (
	"fmt"
	"net"
	"net/netip"
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
	if err := rs.CheckLocal(c.UnixSocketDir != ""); err != nil {
		return nil, configError(err)
	}
	if need, line := rs.NeedsSecrets(); need && c.AuthFile == "" && c.AuthUser == "" {
		return nil, configError(fmt.Errorf("%s:%d asks for a password: give --auth-file or --auth-user to take passwords from", c.AuthHBAFile, line))
	}
	if line := rs.FirstCertLine(); line > 0 && c.TLSCAFile == "" {
		return nil, configError(fmt.Errorf("%s:%d checks client certificates (cert, clientcert): give --tls-ca-file to verify them with", c.AuthHBAFile, line))
	}
	return rs, nil
}

// rules is pgwire's Rules: the first line of the HBA file that matches the
// client picks its method; none refuses it, in PostgreSQL's words.
func (s *Server) rules(p pgwire.Peer) (pgwire.AuthMethod, string) {
	s.mu.Lock()
	rs := s.hba
	s.mu.Unlock()
	c := hba.Client{Database: p.Database, User: p.User, Addr: peerIP(p.Addr), TLS: p.TLS}
	rule, ok := rs.Match(c)
	if !ok {
		return pgwire.AuthReject, hba.NoEntry(c)
	}
	if rule.ClientCert != "" {
		// Checked before the method runs; PostgreSQL checks verify-full's
		// name after it, refusing a password method with 28P01.
		switch {
		case p.ClientCert == nil:
			return pgwire.AuthReject, "connection requires a valid client certificate"
		case rule.ClientCert == hba.VerifyFull && p.ClientCert.Subject.CommonName != p.User:
			return pgwire.AuthReject, fmt.Sprintf("certificate authentication failed for user %q", p.User)
		}
	}
	switch rule.Method {
	case hba.Trust:
		return pgwire.AuthTrust, ""
	case hba.MD5:
		return pgwire.AuthMD5, ""
	case hba.SCRAM:
		return pgwire.AuthSCRAM, ""
	case hba.Password:
		return pgwire.AuthPassword, ""
	case hba.Peer:
		if peerIs(p.Addr, p.User) {
			return pgwire.AuthTrust, ""
		}
		return pgwire.AuthReject, fmt.Sprintf("Peer authentication failed for user %q", p.User)
	case hba.Cert:
		switch {
		case p.ClientCert == nil:
			return pgwire.AuthReject, "connection requires a valid client certificate"
		case p.ClientCert.Subject.CommonName != p.User:
			return pgwire.AuthReject, fmt.Sprintf("certificate authentication failed for user %q", p.User)
		}
		return pgwire.AuthTrust, ""
	}
	return pgwire.AuthReject, hba.Rejected(c)
}

// peerIs reports whether the process at the other end of a Unix-socket
// client runs as the operating-system user called name.
func peerIs(a net.Addr, name string) bool {
	pa, ok := a.(*peerAddr)
	if !ok || !pa.known {
		return false
	}
	u, err := user.LookupId(strconv.Itoa(pa.uid))
	return err == nil && u.Username == name
}

// peerIP is a client's IP address; invalid (a local client to the rules)
// for an address that is not TCP.
func peerIP(a net.Addr) netip.Addr {
	if t, ok := a.(*net.TCPAddr); ok {
		ip, _ := netip.AddrFromSlice(t.IP)
		return ip.Unmap()
	}
	return netip.Addr{}
}
