package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// Users missing from the auth file are looked up with the auth query:
// a SCRAM verifier and an md5 hash from pg_authid both authenticate, a
// wrong password, an unknown user and a role that cannot log in fail as
// a wrong password does, and the auth file still wins.
func TestAuthQuery(t *testing.T) {
	c := pgtest.Shared(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for _, q := range []string{
		"DROP ROLE IF EXISTS aq_scram, aq_md5, aq_nologin, aq_file",
		"SET password_encryption = 'scram-sha-256'",
		"CREATE ROLE aq_scram LOGIN PASSWORD 'scram pw'",
		"CREATE ROLE aq_nologin PASSWORD 'pw'",
		"CREATE ROLE aq_file LOGIN PASSWORD 'server side'",
		"SET password_encryption = 'md5'",
		"CREATE ROLE aq_md5 LOGIN PASSWORD 'md5 pw'",
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	dir := t.TempDir()
	users := filepath.Join(dir, "users.txt")
	write(t, users, `"aq_file" "from the file"`+"\n")
	for _, mode := range []string{"session", "transaction"} {
		t.Run(mode, func(t *testing.T) {
			// The cluster trusts every local connection: the auth user
			// (postgres, a superuser) runs the default query.
			url, stop := startRouter(t, c.URL(), "--pool-mode", mode, "--auth-file", users, "--auth-user", "postgres")
			defer stop()
			try := func(user, password string) error {
				u := strings.Replace(url, "postgres@", user+":"+strings.ReplaceAll(password, " ", "%20")+"@", 1)
				conn, err := pgx.Connect(ctx, u)
				if err != nil {
					return err
				}
				defer conn.Close(ctx)
				var who string
				if err := conn.QueryRow(ctx, "select current_user").Scan(&who); err != nil {
					return err
				}
				if who != user {
					t.Errorf("%s: server session runs as %s", user, who)
				}
				return nil
			}
			for _, ok := range [][2]string{{"aq_scram", "scram pw"}, {"aq_md5", "md5 pw"}, {"aq_file", "from the file"}} {
				if err := try(ok[0], ok[1]); err != nil {
					t.Errorf("%s with the right password: %v", ok[0], err)
				}
			}
			for _, bad := range [][2]string{{"aq_scram", "wrong"}, {"aq_md5", "wrong"}, {"aq_nologin", "pw"}, {"aq_nobody", "pw"}, {"aq_file", "server side"}} {
				err := try(bad[0], bad[1])
				if err == nil || !strings.Contains(err.Error(), "28P01") {
					t.Errorf("%s with %q: want 28P01, got %v", bad[0], bad[1], err)
				}
			}
		})
	}
}

// A custom query that fails is a lookup error (28000), logged, not a crash.
func TestAuthQueryErrors(t *testing.T) {
	c := pgtest.Shared(t)
	url, stop := startRouter(t, c.URL(), "--auth-user", "postgres", "--auth-query", "SELECT nope FROM nowhere WHERE $1 = ''")
	defer stop()
	_, err := pgx.Connect(context.Background(), strings.Replace(url, "postgres@", "someone:pw@", 1))
	if err == nil || !strings.Contains(err.Error(), "28000") || !strings.Contains(err.Error(), "could not look up user") {
		t.Fatalf("want 28000 could not look up user, got %v", err)
	}
	var out, errb strings.Builder
	if code := run(context.Background(), []string{"--server-url", c.URL(), "--auth-query", "SELECT 1"}, &out, &errb, nil, nil); code != exitUsage || !strings.Contains(errb.String(), "--auth-user") {
		t.Fatalf("--auth-query without --auth-user: exit %d, %s", code, errb.String())
	}
}
