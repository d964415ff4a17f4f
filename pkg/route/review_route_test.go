// Review of pkg/route (and the route mapping of pkg/bouncerini): each test
// asserts the correct behaviour and failed on the code before its fix.
// The review's two reload findings (a connected client kept its old
// forced user) are checked through the proxy by TestDatabasesReloadForcedUser
// in tools/qprouter.

package route

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/bouncerini"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/pool"
)

// rvCluster is the package's shared cluster with the roles the tests use.
func rvCluster(t *testing.T) *pgtest.Cluster {
	t.Helper()
	c := pgtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pc, err := pgconn.Connect(ctx, c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(context.Background())
	for _, r := range []string{"zz_app_rw", "zz_app_ro", "zz_bob"} {
		pc.Exec(ctx, "CREATE ROLE "+r+" LOGIN").ReadAll() // already there: ignored
	}
	pc.Exec(ctx, "CREATE DATABASE zz_legacy").ReadAll()
	return c
}

// rvSetting is current_setting(name) on a connection the connector opens
// for the pool of (database, user).
func rvSetting(t *testing.T, connect pool.Connector, database, user, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pc, err := connect(ctx, database, user)
	if err != nil {
		t.Fatalf("connect %s as %s: %v", database, user, err)
	}
	defer pc.Close(context.Background())
	res, err := pc.Exec(ctx, "SELECT current_setting('"+name+"')").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return string(res[0].Rows[0][0])
}

// loadIni maps a pgbouncer.ini text.
func rvLoadIni(t *testing.T, text string) *bouncerini.Settings {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pgbouncer.ini")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := bouncerini.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.PoolErrors) > 0 || len(s.Errors) > 0 {
		t.Fatalf("refused: %v %v", s.PoolErrors, s.Errors)
	}
	return s
}

// A [databases] entry's quoted value with a space (datestyle='ISO, DMY',
// application_name='billing worker', host='/run/my sockets') reaches the
// server with '+' for each space: bouncerini's serverURL writes the query
// with url.Values.Encode (space as '+', HTML-form encoding), and pgx parses
// postgres:// URLs as libpq does, where '+' is a literal plus (only %XX is
// decoded). PgBouncer sends the value as written. Expected: the server's
// settings are exactly the entry's values.
func TestRouteReviewIniValueWithSpaceReachesServer(t *testing.T) {
	c := rvCluster(t)
	s := rvLoadIni(t, fmt.Sprintf(`[databases]
app = host=127.0.0.1 port=%d dbname=postgres user=postgres application_name='billing worker' datestyle='ISO, DMY'
[pgbouncer]
auth_type = trust
`, c.Port))
	tg, err := NewTargets(s.Values["server_url"], s.Databases)
	if err != nil {
		t.Fatal(err)
	}
	connect := tg.Connector(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if pc, err := connect(ctx, "app", "postgres"); err != nil {
		t.Errorf("datestyle='ISO, DMY' in [databases]: no connection to the database at all: %v", err)
	} else {
		pc.Close(ctx)
	}
	s = rvLoadIni(t, fmt.Sprintf(`[databases]
app = host=127.0.0.1 port=%d dbname=postgres user=postgres application_name='billing worker'
[pgbouncer]
auth_type = trust
`, c.Port))
	if tg, err = NewTargets(s.Values["server_url"], s.Databases); err != nil {
		t.Fatal(err)
	}
	connect = tg.Connector(nil)
	if got := rvSetting(t, connect, "app", "postgres", "application_name"); got != "billing worker" {
		t.Errorf("application_name='billing worker' in [databases]: the server has %q (URL %s)", got, s.Databases["app"])
	}
}

// Same encoding in Targets itself: a named URL that carries one of
// qprouter's own parameters (connect_query, load_balance_hosts,
// auth_user, ...) is re-encoded by takeOwnParams with url.Values.Encode,
// which turns every %20 of the parameters left for pgx (application_name,
// options, ?password=, ?host=) into '+', a literal plus for pgx/libpq.
// The same URL without connect_query sends "billing worker" (companion
// check below), so adding connect_query changes the other settings.
func TestRouteReviewOwnParamsKeepOtherParamsIntact(t *testing.T) {
	c := rvCluster(t)
	base := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&application_name=billing%%20worker", c.Port)
	tg, err := NewTargets("", map[string]string{
		"plain": base,
		"cq":    base + "&connect_query=SELECT%201",
	})
	if err != nil {
		t.Fatal(err)
	}
	connect := tg.Connector(nil)
	if got := rvSetting(t, connect, "plain", "postgres", "application_name"); got != "billing worker" {
		t.Fatalf("without connect_query: %q", got)
	}
	if got := rvSetting(t, connect, "cq", "postgres", "application_name"); got != "billing worker" {
		t.Errorf("with connect_query=SELECT%%201 added: application_name %q, want %q", got, "billing worker")
	}
}

// PgBouncer uses a [databases] entry's password= only with its user=
// (loader.c parse_database: the password goes to force_user() and nowhere
// else; docs: "If no password is specified here, the password from the
// auth_file or auth_query will be used"). bouncerini writes
// `pw_only = host=... password=secret` as postgres://:secret@host/, and
// Targets then logs EVERY client user in to that database with the
// password "secret" instead of the user's own from the auth file (one
// role's password handed out for all users). Expected: bob's own password.
func TestRouteReviewPasswordWithoutUserNotForEveryone(t *testing.T) {
	s := rvLoadIni(t, `[databases]
pw_only = host=10.0.0.1 dbname=app password=secret
[pgbouncer]
auth_type = trust
`)
	tg, err := NewTargets(s.Values["server_url"], s.Databases)
	if err != nil {
		t.Fatal(err)
	}
	user := tg.poolUser("pw_only", "bob")
	cfg, err := tg.ConnConfig("pw_only", user, func(u string) string { return "own-" + u })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.User != "bob" || cfg.Password != "own-bob" {
		t.Errorf("client bob on pw_only logs in as %q with password %q, want bob with his auth-file password own-bob (URL %s)", cfg.User, cfg.Password, s.Databases["pw_only"])
	}
}
