package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/pgwire"
)

// TestServeHBA: with --auth-hba-file each client gets its line's method
// (trust without a password, md5 and password against the auth file),
// reject and "no entry" refuse in PostgreSQL's words; rules the server
// cannot honour stop it at start.
func TestServeHBA(t *testing.T) {
	ctx := context.Background()
	src := pgtest.Shared(t)
	conn, err := pgx.Connect(ctx, src.URL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `DROP TABLE IF EXISTS hba_items; CREATE TABLE hba_items (id int); INSERT INTO hba_items VALUES (1), (2)`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	dir := t.TempDir()
	db := filepath.Join(dir, "copy.duckdb")
	var out, errs bytes.Buffer
	if code := run(ctx, []string{"snapshot", "--source", src.URL(), "--tables", "hba_items", "--target", db, "--progress", "never"}, &out, &errs); code != 0 {
		t.Fatalf("snapshot: exit %d\n%s", code, errs.String())
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	users := write("users.txt", `"ann" "ann pw"`+"\n"+`"pat" "`+pgwire.MD5Secret("pat", "pat pw")+`"`+"\n")
	rules := write("pg_hba.conf", "host all tina 127.0.0.1/32 trust\nhost all ann all md5\nhost all pat all password\nhost all rex all reject\n")
	addr := serve(t, ctx, db, "--auth-file", users, "--auth-hba-file", rules)
	login := func(user, password string) error {
		c, err := pgx.Connect(ctx, "postgres://"+user+":"+strings.ReplaceAll(password, " ", "%20")+"@"+addr+"/analytics?sslmode=disable")
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		var n int
		return c.QueryRow(ctx, "SELECT count(*) FROM hba_items").Scan(&n)
	}
	refused := func(err error, code, message string) {
		t.Helper()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != code || pe.Message != message {
			t.Errorf("got %v, want %s %q", err, code, message)
		}
	}
	for user, password := range map[string]string{"tina": "", "ann": "ann pw", "pat": "pat pw"} {
		if err := login(user, password); err != nil {
			t.Errorf("%s: %v", user, err)
		}
	}
	refused(login("ann", "wrong"), "28P01", `password authentication failed for user "ann"`)
	refused(login("pat", "wrong"), "28P01", `password authentication failed for user "pat"`)
	refused(login("rex", ""), "28000", `pg_hba.conf rejects connection for host "127.0.0.1", user "rex", database "analytics", no encryption`)
	refused(login("zoe", ""), "28000", `no pg_hba.conf entry for host "127.0.0.1", user "zoe", database "analytics", no encryption`)

	for text, want := range map[string]string{
		"host all all all md5\n":               "asks for a password: give --auth-file",
		"hostssl all all all cert\n":           "qpanalytics does not verify client certificates",
		"host all all all ldap ldapserver=x\n": "authentication method ldap is not supported",
	} {
		errs.Reset()
		if code := run(ctx, []string{"serve", "--db", db, "--listen", "127.0.0.1:0", "--auth-hba-file", write("bad.conf", text)}, &out, &errs); code != exitUsage || !strings.Contains(errs.String(), want) {
			t.Errorf("%q: exit %d, %s; want %d and %q", text, code, errs.String(), exitUsage, want)
		}
	}
}
