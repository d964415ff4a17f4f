// Host-based rules as ServerConfig.Rules: pkg/hba's decision for a Peer.

package pgwire

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/qpkit/qpkit/pkg/hba"
)

// HBARules is a ServerConfig.Rules that asks current() for the rules in
// force (a server that rereads its file swaps them) and decides each
// client by them. osUser returns the operating-system user of a
// Unix-socket client's process (the peer method), false when unknown; nil
// refuses every peer line.
func HBARules(current func() *hba.Rules, osUser func(net.Addr) (string, bool)) func(Peer) (AuthMethod, string) {
	return func(p Peer) (AuthMethod, string) {
		ip := peerIP(p.Addr)
		if _, tcp := p.Addr.(*net.TCPAddr); tcp && !ip.IsValid() {
			// A TCP client whose address could not be read is no local
			// client, and no host line can be judged for it.
			return AuthReject, fmt.Sprintf("no pg_hba.conf entry for host \"[unknown]\", user \"%s\", database \"%s\"", p.User, p.Database)
		}
		c := hba.Client{Database: p.Database, User: p.User, Addr: ip, TLS: p.TLS}
		var peer func() (string, bool)
		if osUser != nil {
			peer = func() (string, bool) { return osUser(p.Addr) }
		}
		m, why := current().Decide(c, p.ClientCert, peer)
		switch m {
		case hba.Trust:
			return AuthTrust, ""
		case hba.MD5:
			return AuthMD5, ""
		case hba.SCRAM:
			return AuthSCRAM, ""
		case hba.Password:
			return AuthPassword, ""
		}
		return AuthReject, why
	}
}

// peerIP is a client's IP address; invalid (a local client to host-based
// rules) for an address that is not TCP.
func peerIP(a net.Addr) netip.Addr {
	if t, ok := a.(*net.TCPAddr); ok {
		ip, _ := netip.AddrFromSlice(t.IP)
		return ip.Unmap()
	}
	return netip.Addr{}
}
