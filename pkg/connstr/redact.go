// Package connstr reads PostgreSQL connection strings (URLs and
// key=value strings) as text.
package connstr

import (
	"net/url"
	"regexp"
	"strings"
)

// kvPassword finds password= and sslpassword= in a key=value string: a
// quoted value (a quote inside escaped or doubled), or an unquoted one
// with backslash escapes (two\ words).
var kvPassword = regexp.MustCompile(`((?i:password)\s*=\s*)('(?:[^'\\]|\\.|'')*'|(?:[^\s\\]|\\.)+)`)

// Redact is s for logs and records, its secrets shown as xxxxx: a URL's
// password in its user info and every query parameter whose name holds
// "password" (sslpassword, the client key's passphrase), or a key=value
// string's password= and sslpassword=. URLs are edited as text, not
// parsed: libpq's forms that net/url refuses (a Unix socket's
// %2Ftmp host, a host list with ports) are redacted too, and a password
// is replaced as written, percent-encoded or not.
func Redact(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || (scheme != "postgres" && scheme != "postgresql") {
		return kvPassword.ReplaceAllString(s, "${1}xxxxx")
	}
	// The user info ends at the last @ before the first /, as libpq
	// reads it (a ? there is part of it); the hosts, at the first / or ?
	// after it.
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		slash = len(rest)
	}
	userinfo, hosts := "", rest
	if at := strings.LastIndex(rest[:slash], "@"); at >= 0 {
		userinfo, hosts = rest[:at+1], rest[at+1:]
		if user, _, ok := strings.Cut(userinfo, ":"); ok {
			userinfo = user + ":xxxxx@"
		}
	}
	end := strings.IndexAny(hosts, "/?")
	if end < 0 {
		end = len(hosts)
	}
	auth, tail := userinfo+hosts[:end], hosts[end:]
	if path, query, ok := strings.Cut(tail, "?"); ok {
		parts := strings.Split(query, "&")
		for i, part := range parts {
			k, _, _ := strings.Cut(part, "=")
			if key, err := url.QueryUnescape(k); err != nil || strings.Contains(strings.ToLower(key), "password") {
				parts[i] = k + "=xxxxx"
			}
		}
		tail = path + "?" + strings.Join(parts, "&")
	}
	// A ? or & before the user info's @ (a query value holding @, no /
	// after it) hides parameters from the step above: their passwords go
	// too.
	return scheme + "://" + urlPassword.ReplaceAllString(auth+tail, "${1}xxxxx")
}

// urlPassword finds a URL parameter whose name holds "password".
var urlPassword = regexp.MustCompile(`(?i)([?&][^=&?]*password=)[^&]*`)
