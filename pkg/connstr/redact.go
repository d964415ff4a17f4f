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
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	auth, tail := rest[:end], rest[end:]
	if at := strings.LastIndex(auth, "@"); at >= 0 {
		if user, _, ok := strings.Cut(auth[:at], ":"); ok {
			auth = user + ":xxxxx" + auth[at:]
		}
	}
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
	return scheme + "://" + auth + tail
}
