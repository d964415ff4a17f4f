// Tests of ServerConfig.Rules: a method per client, chosen before its credential.

package pgwire

import (
	"net"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// byDatabase is a Rules function: the method is the database's name
// ("trust", "md5", "scram", "password", anything else refused), and the peer it saw
// is recorded.
func byDatabase(seen *Peer) func(Peer) (AuthMethod, string) {
	return func(p Peer) (AuthMethod, string) {
		*seen = p
		switch p.Database {
		case "trust":
			return AuthTrust, ""
		case "md5":
			return AuthMD5, ""
		case "scram":
			return AuthSCRAM, ""
		case "password":
			return AuthPassword, ""
		case "silent":
			return AuthReject, ""
		}
		return AuthReject, "no rule for " + p.Database
	}
}

// TestRulesAccept: through Accept, with pgx, the rule's method wins over the
// credential's; trust needs no credential at all; a refusal carries the
// rule's words; a credential of reject still refuses.
func TestRulesAccept(t *testing.T) {
	table := map[string]Credential{
		"plain":  {Method: AuthTrust, Password: "s3cret"}, // the credential's method is not the rule's
		"hash":   {Method: AuthSCRAM, Password: MD5Secret("hash", "s3cret")},
		"banned": {Method: AuthReject},
		"verif":  {Method: AuthMD5, Password: SCRAMVerifier("s3cret")},
	}
	var seen Peer
	tlsCfg, _ := testTLS(t)
	s := startServer(t, &ServerConfig{TLS: tlsCfg, Credentials: users(table), Rules: byDatabase(&seen)})
	base := "host=127.0.0.1 port=" + s.addr[strings.LastIndex(s.addr, ":")+1:] + " "
	for _, tt := range []struct {
		conn, code, message string
	}{
		{"dbname=trust user=nobody sslmode=disable", "", ""},
		{"dbname=md5 user=plain password=s3cret sslmode=disable", "", ""},
		{"dbname=md5 user=plain password=wrong sslmode=disable", CodeInvalidPassword, `password authentication failed for user "plain"`},
		{"dbname=md5 user=hash password=s3cret sslmode=disable", "", ""},
		{"dbname=scram user=plain password=s3cret sslmode=require", "", ""},
		{"dbname=scram user=hash password=s3cret sslmode=disable", CodeInvalidPassword, `password authentication failed for user "hash"`},
		{"dbname=scram user=nobody password=s3cret sslmode=disable", CodeInvalidPassword, `password authentication failed for user "nobody"`},
		{"dbname=password user=plain password=s3cret sslmode=disable", "", ""},
		{"dbname=password user=hash password=s3cret sslmode=disable", "", ""},
		{"dbname=password user=verif password=s3cret sslmode=require", "", ""},
		{"dbname=password user=verif password=wrong sslmode=disable", CodeInvalidPassword, `password authentication failed for user "verif"`},
		{"dbname=password user=nobody password=s3cret sslmode=disable", CodeInvalidPassword, `password authentication failed for user "nobody"`},
		{"dbname=password user=banned password=s3cret sslmode=disable", CodeInvalidAuthorization, `connection rejected for user "banned", database "password"`},
		{"dbname=md5 user=banned password=s3cret sslmode=disable", CodeInvalidAuthorization, `connection rejected for user "banned", database "md5"`},
		{"dbname=other user=plain password=s3cret sslmode=disable", CodeInvalidAuthorization, "no rule for other"},
		{"dbname=silent user=plain password=s3cret sslmode=disable", CodeInvalidAuthorization, `connection rejected for user "plain", database "silent"`},
	} {
		t.Run(tt.conn, func(t *testing.T) {
			got, err := connect(t, base+tt.conn)
			if tt.code == "" {
				if err != nil || got != "hello" {
					t.Fatalf("%q %v", got, err)
				}
				if r := s.next(t); r.err != nil || r.client == nil {
					t.Fatalf("server: %v", r.err)
				}
			} else {
				wantRefused(t, err, tt.code, tt.message)
				s.next(t)
			}
			wantTLS := strings.Contains(tt.conn, "sslmode=require")
			if a, ok := seen.Addr.(*net.TCPAddr); !ok || !a.IP.IsLoopback() || seen.TLS != wantTLS {
				t.Errorf("the rule saw %+v, want a loopback TCP address and TLS %v", seen, wantTLS)
			}
		})
	}
}

// TestRulesHandshake: on the event loop's path the rule is applied too: a
// trusted database needs no credential, md5 is asked for a credential
// whose own method is trust, and a refusal or a cleartext password goes to
// Accept.
func TestRulesHandshake(t *testing.T) {
	var seen Peer
	cfg := quick(map[string]Credential{"tina": {Method: AuthTrust, Password: "pw"}})
	cfg.Rules = byDatabase(&seen)
	addr := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 5}

	h := NewHandshake(cfg).From(addr)
	if out, step := feed(t, h, packet(protocol30, params("user", "stranger", "database", "trust")...)); step != StepDone || len(out) != 0 {
		t.Fatalf("trusted database: step %d out %q", step, out)
	}
	if seen.Addr != addr || seen.User != "stranger" || seen.TLS {
		t.Errorf("the rule saw %+v", seen)
	}

	h = NewHandshake(cfg).From(addr)
	out, step := feed(t, h, packet(protocol30, params("user", "tina", "database", "md5")...))
	msgs := backend(t, out)
	if step != StepMore || len(msgs) != 1 {
		t.Fatalf("md5 by rule: step %d, %v", step, msgs)
	}
	if _, ok := msgs[0].(*pgproto3.AuthenticationMD5Password); !ok {
		t.Fatalf("md5 by rule: %T, want AuthenticationMD5Password", msgs[0])
	}
	if _, step := feed(t, h, passwordMsg("tina", "pw", h.salt)); step != StepDone {
		t.Fatalf("md5 answer: step %d (%v)", step, h.Err())
	}

	for _, db := range []string{"other", "silent", "password"} {
		h = NewHandshake(cfg).From(addr)
		if out, step := feed(t, h, packet(protocol30, params("user", "tina", "database", db)...)); step != StepAccept || len(out) != 0 {
			t.Errorf("refused by rule or a cleartext password (%s): step %d out %q, want StepAccept (Accept runs it)", db, step, out)
		}
	}
}
