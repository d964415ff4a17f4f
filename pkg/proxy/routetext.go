package proxy

import "github.com/qpkit/qpkit/pkg/route"

// routeText is the statement text a router sees for an extended-protocol
// message that may begin a transaction: a Parse's query, or the text of
// the named statement a Bind or a Describe of a statement uses ("" for
// the unnamed one, whose text the session does not keep, and anything
// else). Only for a router other than the default one, which picks the
// pool of the client's welcome and never reads it.
func (s *session) routeText(typ byte, body []byte) string {
	if _, byUser := s.p.router.(*route.Pools); byUser {
		return ""
	}
	switch typ {
	case 'P':
		if _, rest, ok := cstring(body); ok {
			q, _, _ := cstring(rest)
			return q
		}
		return ""
	case 'B':
		if _, rest, ok := cstring(body); ok {
			name, _, _ := cstring(rest)
			return s.stmtText(name)
		}
		return ""
	case 'D':
		if len(body) > 0 && body[0] == 'S' {
			name, _, _ := cstring(body[1:])
			return s.stmtText(name)
		}
	}
	return ""
}

// stmtText is the text of the client's named statement name ("" when
// unknown or unnamed).
func (s *session) stmtText(name string) string {
	if name == "" {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.stmts[name]; st != nil {
		return st.query
	}
	return ""
}
