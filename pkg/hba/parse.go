// Reading pg_hba.conf: tokens, fields, and the checks PostgreSQL makes.

package hba

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Load reads the rules of the file at path.
func Load(path string) (*Rules, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hba file: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads rules in pg_hba.conf's format from r; path names the file in
// errors and is where @file inclusions are looked up from. A line qprouter
// cannot honour (an authentication method other than trust, reject, md5,
// scram-sha-256 and password on a TCP line, options, host names, samehost,
// samenet, group membership) is an error naming it.
func Parse(r io.Reader, path string) (*Rules, error) {
	rs := &Rules{File: path}
	lines, err := logicalLines(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, l := range lines {
		fields, err := tokenize(l.text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, l.n, err)
		}
		if len(fields) == 0 {
			continue
		}
		rule, err := rs.rule(fields, l.n, filepath.Dir(path))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, l.n, err)
		}
		rs.Rules = append(rs.Rules, rule)
	}
	return rs, nil
}

// token is one item of a field.
type token struct {
	text   string
	quoted bool
}

// line is a logical line (continuations joined) and its first line number.
type line struct {
	n    int
	text string
}

// logicalLines joins lines ending in a backslash with the next one.
func logicalLines(r io.Reader) ([]line, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var out []line
	n, start := 0, 0
	var cur strings.Builder
	for sc.Scan() {
		n++
		t := sc.Text()
		if cur.Len() == 0 {
			start = n
		}
		if strings.HasSuffix(t, "\\") {
			// Joined as PostgreSQL joins them: with nothing between.
			cur.WriteString(t[:len(t)-1])
			continue
		}
		cur.WriteString(t)
		out = append(out, line{start, cur.String()})
		cur.Reset()
	}
	if cur.Len() > 0 {
		out = append(out, line{start, cur.String()})
	}
	return out, sc.Err()
}

// tokenize splits a line into fields, each a comma-separated list of
// tokens; double quotes make a token that is never a keyword ("" inside is
// a quote); # outside quotes starts a comment.
func tokenize(s string) ([][]token, error) {
	var fields [][]token
	var field []token
	i := 0
	space := func(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }
	for {
		for i < len(s) && space(s[i]) {
			i++
		}
		if i >= len(s) || s[i] == '#' {
			break
		}
		var tok token
		var b strings.Builder
		for i < len(s) && !space(s[i]) && s[i] != ',' && s[i] != '#' {
			if s[i] != '"' {
				b.WriteByte(s[i])
				i++
				continue
			}
			tok.quoted = true
			i++
			for {
				if i >= len(s) {
					return nil, errors.New("unterminated quoted string")
				}
				if s[i] == '"' {
					if i+1 < len(s) && s[i+1] == '"' {
						b.WriteByte('"')
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(s[i])
				i++
			}
		}
		tok.text = b.String()
		field = append(field, tok)
		if i < len(s) && s[i] == ',' {
			i++
			for i < len(s) && space(s[i]) {
				i++
			}
			if i >= len(s) || s[i] == '#' {
				return nil, errors.New("a list ends with a comma")
			}
			continue // the list goes on
		}
		fields = append(fields, field)
		field = nil
	}
	return fields, nil
}

// pgMethods are the methods PostgreSQL 15 knows.
var pgMethods = []string{"trust", "reject", "md5", "password", "scram-sha-256", "gss", "sspi", "ident", "peer", "ldap", "radius", "cert", "pam", "bsd"}

// rule reads one line's fields.
func (rs *Rules) rule(fields [][]token, n int, dir string) (Rule, error) {
	r := Rule{Line: n}
	next := func(what string) ([]token, error) {
		if len(fields) == 0 {
			return nil, fmt.Errorf("end of line before the %s field", what)
		}
		f := fields[0]
		fields = fields[1:]
		return f, nil
	}
	typ, _ := next("type")
	if len(typ) != 1 || typ[0].quoted {
		return r, errors.New("the connection type is one word: local, host, hostssl, hostnossl, hostgssenc or hostnogssenc")
	}
	r.Type = ConnType(typ[0].text)
	switch r.Type {
	case Local, Host, HostSSL, HostNoSSL, HostGSSEnc, HostNoGSSEnc:
	default:
		return r, fmt.Errorf("invalid connection type %q", typ[0].text)
	}
	dbs, err := next("database")
	if err != nil {
		return r, err
	}
	if r.Databases, err = names(dbs, dir, "database"); err != nil {
		return r, err
	}
	users, err := next("user")
	if err != nil {
		return r, err
	}
	if r.Users, err = names(users, dir, "user"); err != nil {
		return r, err
	}
	if r.Type != Local {
		addr, err := next("address")
		if err != nil {
			return r, err
		}
		if err := r.address(addr, &fields); err != nil {
			return r, err
		}
	}
	m, err := next("method")
	if err != nil {
		return r, err
	}
	if len(m) != 1 {
		return r, errors.New("the method is one word")
	}
	method := m[0].text
	if !slices.Contains(pgMethods, method) {
		return r, fmt.Errorf("invalid authentication method %q", method)
	}
	switch Method(method) {
	case Trust, Reject, MD5, SCRAM, Password:
	case Peer:
		if r.Type != Local {
			return r, errors.New("peer authentication is only supported on local sockets")
		}
	case Cert:
		if r.Type != HostSSL {
			return r, errors.New("cert authentication is only supported on hostssl connections")
		}
	default:
		if r.Type == Local { // kept: CheckLocal refuses it if Unix sockets are served
			r.Method = Method(method)
			r.Unsupported = true
			break
		}
		return r, unsupported(method)
	}
	r.Method = Method(method)
	if !r.Unsupported {
		if err := r.options(fields); err != nil {
			return r, err
		}
	}
	return r, nil
}

// options reads the name=value fields after the method: clientcert and
// clientname (on hostssl lines, as PostgreSQL) and map (peer and cert
// lines); any other option is refused.
func (r *Rule) options(fields [][]token) error {
	var other []string
	for _, f := range fields {
		for _, t := range f {
			name, val, ok := strings.Cut(t.text, "=")
			if !ok {
				return fmt.Errorf("authentication option not in name=value format: %s", t.text)
			}
			switch name {
			case "clientcert":
				if r.Type != HostSSL {
					return errors.New(`clientcert can only be configured for "hostssl" rows`)
				}
				switch ClientCert(val) {
				case VerifyFull:
				case VerifyCA:
					if r.Method == Cert {
						return errors.New(`clientcert only accepts "verify-full" when using "cert" authentication`)
					}
				default:
					return fmt.Errorf("invalid value for clientcert: %q", val)
				}
				r.ClientCert = ClientCert(val)
			case "map":
				if r.Method != Peer && r.Method != Cert {
					return errors.New(`authentication option "map" is only valid for authentication methods ident, peer, gssapi, sspi, and cert`)
				}
				r.Map = val
			case "clientname":
				if r.Type != HostSSL {
					return errors.New(`clientname can only be configured for "hostssl" rows`)
				}
				switch val {
				case "CN", "DN":
					r.ClientNameDN = val == "DN"
				default:
					return fmt.Errorf("invalid value for clientname: %q", val)
				}
			default:
				other = append(other, t.text)
			}
		}
	}
	if len(other) > 0 {
		return fmt.Errorf("options are not supported: %s", strings.Join(other, " "))
	}
	return nil
}

// names reads a database or user field: keywords, names and @file
// inclusions.
func names(toks []token, dir, what string) ([]name, error) {
	return namesAt(toks, dir, what, 0)
}

// maxIncludeDepth is how deep @file inclusions may nest, as PostgreSQL's
// limit of 10: a file that includes itself is refused, not followed.
const maxIncludeDepth = 10

func namesAt(toks []token, dir, what string, depth int) ([]name, error) {
	var out []name
	for _, t := range toks {
		switch {
		case t.quoted:
			out = append(out, name{text: t.text})
		case strings.HasPrefix(t.text, "@"):
			// As PostgreSQL: an absolute name as it is, a relative one
			// from the directory of the file that names it.
			path := t.text[1:]
			if !filepath.IsAbs(path) {
				path = filepath.Join(dir, path)
			}
			inc, err := include(path)
			if err != nil {
				return nil, err
			}
			if depth >= maxIncludeDepth {
				return nil, fmt.Errorf("%s: @file inclusions nested deeper than %d (a file including itself?)", t.text, maxIncludeDepth)
			}
			more, err := namesAt(inc, filepath.Dir(path), what, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.text, err)
			}
			out = append(out, more...)
		case t.text == "all":
			out = append(out, name{text: t.text, keyword: true})
		case what == "database" && (t.text == "sameuser" || t.text == "replication"):
			out = append(out, name{text: t.text, keyword: true})
		case what == "database" && (t.text == "samerole" || t.text == "samegroup"),
			what == "user" && strings.HasPrefix(t.text, "+"):
			return nil, fmt.Errorf("%s: role membership is not known to these rules; list the users", t.text)
		case t.text == "":
			return nil, fmt.Errorf("empty %s name", what)
		default:
			out = append(out, name{text: t.text})
		}
	}
	return out, nil
}

// include reads the names of an @file: tokens separated by whitespace or
// commas, on any number of lines.
func include(path string) ([]token, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lines, err := logicalLines(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []token
	for _, l := range lines {
		fields, err := tokenize(l.text)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, f := range fields {
			out = append(out, f...)
		}
	}
	return out, nil
}

// address reads a host line's address field, and its mask field when the
// address is a bare IP.
func (r *Rule) address(tok []token, fields *[][]token) error {
	if len(tok) != 1 {
		return errors.New("the address is one word")
	}
	t := tok[0]
	switch {
	case !t.quoted && t.text == "all":
		r.allAddrs = true
		return nil
	case !t.quoted && (t.text == "samehost" || t.text == "samenet"):
		return fmt.Errorf("%s is not supported: give the addresses (CIDR)", t.text)
	case strings.Contains(t.text, "/"):
		p, err := netip.ParsePrefix(t.text)
		if err != nil {
			return fmt.Errorf("invalid IP address or mask %q", t.text)
		}
		r.Prefix = p.Masked()
		return nil
	}
	ip, err := netip.ParseAddr(t.text)
	if err != nil {
		return fmt.Errorf("host name %q: host names are not supported; give an address with a mask (CIDR)", t.text)
	}
	if len(*fields) < 2 { // the mask and the method must follow
		return fmt.Errorf("IP address %s has no mask", t.text)
	}
	m := (*fields)[0]
	*fields = (*fields)[1:]
	mask, err := netip.ParseAddr(m[0].text)
	if err != nil || len(m) != 1 || mask.Is4() != ip.Is4() {
		return fmt.Errorf("invalid IP mask %q", m[0].text)
	}
	bits, ok := maskBits(mask.AsSlice())
	if !ok {
		return fmt.Errorf("invalid IP mask %q: not contiguous", m[0].text)
	}
	r.Prefix = netip.PrefixFrom(ip, bits).Masked()
	return nil
}

// maskBits is the prefix length of a contiguous mask.
func maskBits(b []byte) (int, bool) {
	bits, done := 0, false
	for _, x := range b {
		for i := 7; i >= 0; i-- {
			set := x&(1<<i) != 0
			switch {
			case set && done:
				return 0, false
			case set:
				bits++
			default:
				done = true
			}
		}
	}
	return bits, true
}
