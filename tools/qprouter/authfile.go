// The auth file: pgbouncer userlist.txt lines "user" "secret".

package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/qpkit/qpkit/pkg/pgwire"
)

// userlist maps a user to its secret: a plaintext password, "md5" + 32 hex,
// or a SCRAM-SHA-256 verifier.
type userlist map[string]string

// readUserlist reads path. Blank lines and lines starting with ';' or '#'
// are skipped; a doubled quote inside a quoted field is a quote.
func readUserlist(path string) (userlist, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	users := make(userlist)
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == ';' || s[0] == '#' {
			continue
		}
		user, rest, err := quoted(s)
		if err == nil {
			var secret string
			secret, rest, err = quoted(strings.TrimSpace(rest))
			if err == nil {
				users[user] = secret
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return users, nil
}

// quoted reads one "..." field from the start of s.
func quoted(s string) (field, rest string, err error) {
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

// credential is the method and secret for user; plaintext and SCRAM
// verifiers authenticate with SCRAM, md5 hashes with md5.
func (u userlist) credential(user string) (pgwire.Credential, error) {
	secret, ok := u[user]
	if !ok {
		return pgwire.Credential{}, pgwire.ErrUnknownUser
	}
	if len(secret) == 35 && strings.HasPrefix(secret, "md5") {
		return pgwire.Credential{Method: pgwire.AuthMD5, Password: secret}, nil
	}
	return pgwire.Credential{Method: pgwire.AuthSCRAM, Password: secret}, nil
}

// serverPassword is user's plaintext password for logging in to the server
// ("" for hashed secrets, which cannot be).
func (u userlist) serverPassword(user string) string {
	s := u[user]
	if strings.HasPrefix(s, "SCRAM-SHA-256$") || (len(s) == 35 && strings.HasPrefix(s, "md5")) {
		return ""
	}
	return s
}
