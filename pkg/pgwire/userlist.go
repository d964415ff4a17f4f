// The user list: pgbouncer userlist.txt lines "user" "secret" read into credentials.

package pgwire

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// ReadUserList reads pgbouncer userlist.txt lines `"user" "secret"` from r
// into a Credential per user; name (a file name) prefixes errors as
// name:line. Blank lines and lines starting with ';' or '#' are skipped; a
// doubled quote inside a quoted field is a quote; a later line for a user
// replaces an earlier one. The secret is a plaintext password or a SCRAM
// verifier (Method AuthSCRAM), or "md5" + 32 characters (Method AuthMD5).
func ReadUserList(r io.Reader, name string) (map[string]Credential, error) {
	users := make(map[string]Credential)
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == ';' || s[0] == '#' {
			continue
		}
		user, rest, err := quotedField(s)
		if err == nil {
			var secret string
			secret, _, err = quotedField(strings.TrimSpace(rest))
			if err == nil {
				users[user] = userListCredential(secret)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return users, nil
}

// quotedField reads one "..." field from the start of s.
func quotedField(s string) (field, rest string, err error) {
	if !strings.HasPrefix(s, `"`) {
		return "", "", fmt.Errorf(`want a "quoted" field, got %q`, s)
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '"' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '"' {
			b.WriteByte('"')
			i++
			continue
		}
		return b.String(), s[i+1:], nil
	}
	return "", "", fmt.Errorf("unterminated quote in %q", s)
}

// SecretCredential is the Credential for a stored secret, as a user list
// or pg_authid holds it: md5 hashes authenticate with md5, plaintext
// passwords and SCRAM verifiers with SCRAM.
func SecretCredential(secret string) Credential { return userListCredential(secret) }

// userListCredential is the method for a user list secret: md5 hashes
// authenticate with md5, plaintext and SCRAM verifiers with SCRAM.
func userListCredential(secret string) Credential {
	if looksMD5(secret) {
		return Credential{Method: AuthMD5, Password: secret}
	}
	return Credential{Method: AuthSCRAM, Password: secret}
}

// looksMD5 is the user list's test for an md5 hash: "md5" and 32 more
// bytes (hex digits are not checked).
func looksMD5(s string) bool { return len(s) == 35 && strings.HasPrefix(s, "md5") }

// Plaintext is c's password when it is one, to log in to a server with;
// "" for an md5 hash or a SCRAM verifier, which cannot.
func (c Credential) Plaintext() string {
	if isSCRAMVerifier(c.Password) || looksMD5(c.Password) {
		return ""
	}
	return c.Password
}
