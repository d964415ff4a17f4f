package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/pgwire"
)

const hbaRules = `# TYPE  DATABASE   USER        ADDRESS        METHOD
host    postgres   hba_trust   127.0.0.1/32   trust
host    postgres   hba_md5     127.0.0.1 255.255.255.255 md5
host    postgres   hba_pw,hba_pwscram,hba_pwhash,hba_nobody 127.0.0.1/32 password
host    all        hba_scram   127.0.0.0/8    scram-sha-256
host    all        hba_hash    all            scram-sha-256
host    template1  all         all            reject
hostssl all        all         all            trust
`

// TestHBA runs qprouter with --auth-hba-file in session mode and in
// transaction mode (whose event loop applies the rules itself) and checks,
// with pgx and a raw client, that each client gets its line's method:
// trust without a password for a user the auth file does not list, md5
// for a plaintext secret that would otherwise get SCRAM, SCRAM refused for
// an md5 secret, a cleartext password checked against a plaintext, md5 or
// SCRAM secret, reject and "no entry" in PostgreSQL's words; a reload
// rereads the rules.
func TestHBA(t *testing.T) {
	c := pgtest.Shared(t)
	roles := []string{"hba_trust", "hba_md5", "hba_scram", "hba_hash", "hba_pw", "hba_pwscram", "hba_pwhash"}
	stmts := []string{"DROP ROLE IF EXISTS " + strings.Join(roles, ", ")}
	for _, r := range roles {
		stmts = append(stmts, "CREATE ROLE "+r+" LOGIN")
	}
	serverExec(t, c.URL(), stmts...)
	for _, mode := range []string{"session", "transaction"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			users := filepath.Join(dir, "users.txt")
			write(t, users, `"hba_md5" "md5 pw"`+"\n"+`"hba_scram" "scram pw"`+"\n"+`"hba_hash" "`+pgwire.MD5Secret("hba_hash", "hash pw")+`"`+"\n"+
				`"hba_pw" "clear pw"`+"\n"+`"hba_pwscram" "`+pgwire.SCRAMVerifier("clear pw")+`"`+"\n"+`"hba_pwhash" "`+pgwire.MD5Secret("hba_pwhash", "clear pw")+`"`+"\n")
			rules := filepath.Join(dir, "pg_hba.conf")
			write(t, rules, hbaRules)
			adminAddr := freeAddr(t)
			url, stop := startRouter(t, c.URL(), "--pool-mode", mode, "--auth-file", users, "--auth-hba-file", rules, "--admin", adminAddr)
			defer stop()
			addr := strings.TrimSuffix(strings.SplitN(url, "@", 2)[1], "/postgres?sslmode=disable")
			try := func(user, password, db string) error {
				return loginAs(fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable", user, strings.ReplaceAll(password, " ", "%20"), addr, db), user)
			}
			refused := func(err error, code, message string) {
				t.Helper()
				var pe *pgconn.PgError
				if !errors.As(err, &pe) || pe.Code != code || pe.Message != message {
					t.Errorf("got %v, want %s %q", err, code, message)
				}
			}

			if err := try("hba_trust", "", "postgres"); err != nil {
				t.Errorf("trust line, no password, not in the auth file: %v", err)
			}
			if err := try("hba_md5", "md5 pw", "postgres"); err != nil {
				t.Errorf("md5 line: %v", err)
			}
			refused(try("hba_md5", "wrong", "postgres"), "28P01", `password authentication failed for user "hba_md5"`)
			if err := try("hba_scram", "scram pw", "template1"); err != nil {
				t.Errorf("scram line (before the template1 reject line): %v", err)
			}
			refused(try("hba_hash", "hash pw", "postgres"), "28P01", `password authentication failed for user "hba_hash"`)
			for _, user := range []string{"hba_pw", "hba_pwscram", "hba_pwhash"} {
				if err := try(user, "clear pw", "postgres"); err != nil {
					t.Errorf("password line, %s: %v", user, err)
				}
				refused(try(user, "wrong", "postgres"), "28P01", `password authentication failed for user "`+user+`"`)
				refused(try(user, "", "postgres"), "28P01", "empty password returned by client")
			}
			refused(try("hba_nobody", "clear pw", "postgres"), "28P01", `password authentication failed for user "hba_nobody"`)
			refused(try("hba_trust", "", "template1"), "28000", `pg_hba.conf rejects connection for host "127.0.0.1", user "hba_trust", database "template1", no encryption`)
			refused(try("postgres", "", "postgres"), "28000", `no pg_hba.conf entry for host "127.0.0.1", user "postgres", database "postgres", no encryption`)

			// The method itself: the first authentication request.
			for user, want := range map[string]string{"hba_md5": "*pgproto3.AuthenticationMD5Password", "hba_scram": "*pgproto3.AuthenticationSASL", "hba_trust": "*pgproto3.AuthenticationOk", "hba_pw": "*pgproto3.AuthenticationCleartextPassword"} {
				if got := firstAuth(t, addr, user, "postgres"); got != want {
					t.Errorf("%s: first answer %s, want %s", user, got, want)
				}
			}

			// A reload rereads the rules.
			write(t, rules, hbaRules+"host all all 127.0.0.1/32 trust\n")
			resp, err := http.Post("http://"+adminAddr+"/api/reload", "", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("reload: %s", resp.Status)
			}
			if err := try("postgres", "", "postgres"); err != nil {
				t.Errorf("after the reload added a trust line: %v", err)
			}
			// A file that does not load fails the reload; the rules stay.
			write(t, rules, "host all all all peer\n")
			resp, err = http.Post("http://"+adminAddr+"/api/reload", "", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Error("reload with a bad rules file: 200")
			}
			if err := try("postgres", "", "postgres"); err != nil {
				t.Errorf("after a failed reload: %v", err)
			}
		})
	}
}

// firstAuth sends a StartupMessage and returns the type of the server's
// first answer.
func firstAuth(t *testing.T, addr, user, db string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	fe := pgproto3.NewFrontend(conn, conn)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": user, "database": db}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	m, err := fe.Receive()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%T", m)
}

// TestAuthType runs qprouter with --auth-type as PgBouncer's auth_type:
// scram-sha-256 asks every client for SCRAM, so a user whose secret is an
// md5 hash cannot log in; plain asks for the password in clear and checks
// it against any secret.
func TestAuthType(t *testing.T) {
	c := pgtest.Shared(t)
	serverExec(t, c.URL(), "DROP ROLE IF EXISTS at_plain, at_md5", "CREATE ROLE at_plain LOGIN", "CREATE ROLE at_md5 LOGIN")
	users := filepath.Join(t.TempDir(), "users.txt")
	write(t, users, `"at_plain" "plain pw"`+"\n"+`"at_md5" "`+pgwire.MD5Secret("at_md5", "md5 pw")+`"`+"\n")
	for _, tc := range []struct {
		authType, first string
		md5OK           bool
	}{
		{"md5", "*pgproto3.AuthenticationSASL", true}, // the default: by the secret
		{"scram-sha-256", "*pgproto3.AuthenticationSASL", false},
		{"plain", "*pgproto3.AuthenticationCleartextPassword", true},
	} {
		for _, mode := range []string{"session", "transaction"} {
			t.Run(tc.authType+"/"+mode, func(t *testing.T) {
				url, stop := startRouter(t, c.URL(), "--pool-mode", mode, "--auth-file", users, "--auth-type", tc.authType)
				defer stop()
				addr := strings.TrimSuffix(strings.SplitN(url, "@", 2)[1], "/postgres?sslmode=disable")
				if got := firstAuth(t, addr, "at_plain", "postgres"); got != tc.first {
					t.Errorf("first answer %s, want %s", got, tc.first)
				}
				try := func(user, password string) error {
					return loginAs(fmt.Sprintf("postgres://%s:%s@%s/postgres?sslmode=disable", user, strings.ReplaceAll(password, " ", "%20"), addr), user)
				}
				if err := try("at_plain", "plain pw"); err != nil {
					t.Errorf("at_plain: %v", err)
				}
				err := try("at_md5", "md5 pw")
				if tc.md5OK && err != nil {
					t.Errorf("at_md5: %v", err)
				}
				var pe *pgconn.PgError
				if !tc.md5OK && (!errors.As(err, &pe) || pe.Code != "28P01") {
					t.Errorf("at_md5 under SCRAM only: %v, want 28P01", err)
				}
			})
		}
	}
}

// auth_type any, as PgBouncer's: no password, every database served as a
// user of its own whatever user the client names, and any user let in to
// the console, where only admin_users are admins (as PgBouncer 1.18
// does); refused unless every database has its own user.
func TestAuthTypeAny(t *testing.T) {
	c := pgtest.Shared(t)
	serverExec(t, c.URL(), "DROP ROLE IF EXISTS any_app", "CREATE ROLE any_app LOGIN")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "qprouter.toml")
	users := filepath.Join(dir, "users.txt")
	write(t, users, `"whoever" "a password nobody gives"`+"\n")
	// An auth file does not bring passwords back, as in PgBouncer.
	write(t, cfg, fmt.Sprintf("auth_type = \"any\"\nauth_file = %q\nadmin_users = [\"boss\"]\n[databases]\napp = \"postgres://any_app@127.0.0.1:%d/postgres\"\n", users, c.Port))
	addr, _, stop := startWithHUP(t, "--config", cfg)
	defer stop()
	checkServedBy(t, "postgres://whoever@"+addr+"/app?sslmode=disable", "postgres", "any_app", c.Port)
	var pe *pgconn.PgError
	if _, err := pgconn.Connect(context.Background(), "postgres://whoever@"+addr+"/postgres?sslmode=disable"); !errors.As(err, &pe) || pe.Code != "3D000" {
		t.Errorf("a database without an entry: %v, want 3D000", err)
	}
	// The console: as PgBouncer 1.18, a user not in admin_users is let in
	// without a password but may only SHOW; the admin_users are admins.
	cons, err := pgconn.Connect(context.Background(), "postgres://nobody@"+addr+"/pgbouncer?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close(context.Background())
	if _, err := cons.Exec(context.Background(), "SHOW VERSION").ReadAll(); err != nil {
		t.Errorf("SHOW VERSION as a user not in admin_users: %v", err)
	}
	for _, q := range []string{"PAUSE", "RESUME", "SHUTDOWN"} {
		if _, err := cons.Exec(context.Background(), q).ReadAll(); err == nil || !strings.Contains(err.Error(), "admin access needed") {
			t.Errorf("%s as a user not in admin_users: %v, want admin access needed", q, err)
		}
	}
	boss, err := pgconn.Connect(context.Background(), "postgres://boss@"+addr+"/pgbouncer?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer boss.Close(context.Background())
	for _, q := range []string{"PAUSE", "RESUME"} {
		if _, err := boss.Exec(context.Background(), q).ReadAll(); err != nil {
			t.Errorf("%s as a user in admin_users: %v", q, err)
		}
	}

	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--auth-type", "any", "--server-url", c.URL()}, "--auth-type any needs every database to log in as a user of its own"},
		{[]string{"--auth-type", "any", "--config", writeConfig(t, dir, fmt.Sprintf("[databases]\nbare = \"postgres://127.0.0.1:%d/postgres\"\n", c.Port))},
			"[databases] bare has no user"},
	} {
		var errb bytes.Buffer
		if code := run(context.Background(), tc.args, io.Discard, &errb, nil, nil); code != exitUsage || !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("%v: exit %d, %q, want %q", tc.args, code, errb.String(), tc.msg)
		}
	}
	// From a pgbouncer.ini.
	ini := filepath.Join(dir, "pgbouncer.ini")
	write(t, ini, fmt.Sprintf("[databases]\napp = host=127.0.0.1 port=%d dbname=postgres user=any_app\n[pgbouncer]\nauth_type = any\n", c.Port))
	got, _, _, _, err := parse([]string{"--pgbouncer-ini", ini}, io.Discard, io.Discard)
	if err != nil || got.AuthType != "any" {
		t.Errorf("pgbouncer.ini with auth_type = any: %q, %v", got.AuthType, err)
	}
}

// writeConfig writes text to a new config file in dir.
func writeConfig(t *testing.T, dir, text string) string {
	f, err := os.CreateTemp(dir, "*.toml")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	write(t, f.Name(), text)
	return f.Name()
}
