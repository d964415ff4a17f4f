package proxy_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// zzd2Roles makes a login role that is a member of a superuser role (a
// common way to give an application user temporary admin rights with
// SET ROLE).
func zzd2Roles(t *testing.T) {
	t.Helper()
	execShared(t,
		"do $$ begin if not exists (select from pg_roles where rolname = 'zzd2_admin') then create role zzd2_admin superuser nologin; end if; end $$",
		"do $$ begin if not exists (select from pg_roles where rolname = 'zzd2_alice') then create role zzd2_alice login; end if; end $$",
		"grant zzd2_admin to zzd2_alice")
}

// A non-superuser login that raised its privileges with SET ROLE to a
// superuser role and then set a superuser-only parameter: PostgreSQL
// keeps both for the session. Through the proxy, once the client lands on
// another server state, its settings are replayed with the role LAST
// (since today): the parameter is set as the login user, the server
// refuses it (42501), and the session is now ended. Before today the role
// was replayed first and this client worked.
func TestTodayReviewReplayRoleLastBreaksRaisedPrivileges(t *testing.T) {
	zzd2Roles(t)
	c := pgtest.Shared(t)
	check := "select current_user || ' ' || current_setting('log_min_duration_statement')"
	run := func(url string) string {
		a := connect(t, url)
		b := connect(t, url)
		rvExec(t, a, "set role zzd2_admin")
		rvExec(t, a, "set log_min_duration_statement = 0")
		rvSimple(t, b, "select 1") // the only server now has b's settings
		return rvSimple(t, a, check)
	}
	direct := run(fmt.Sprintf("postgres://zzd2_alice@127.0.0.1:%d/postgres?sslmode=disable", c.Port))
	if direct != "zzd2_admin 0" {
		t.Fatalf("direct: %q", direct)
	}
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1})
	if got := run(fmt.Sprintf("postgres://zzd2_alice@%s/postgres?sslmode=disable", r.addr)); got != direct {
		t.Errorf("through the proxy: %q; direct: %q", got, direct)
	}
}

// PREPARE pinned any text starting with PREPARE before today. The new
// pattern wants the name to be \w+ (ASCII letters, digits, _) or a quoted
// name without "": a valid name with $ or a non-ASCII letter, or a quoted
// name with "" in it, no longer pins, so the SQL prepared statement stays
// on the server for the next client (who can EXECUTE it), and the client
// that made it loses it.
func TestTodayReviewPrepareNamesNoLongerPinned(t *testing.T) {
	for _, name := range []string{`zz$q`, `zzqé`, `"zz""q"`} {
		t.Run(name, func(t *testing.T) {
			c := pgtest.Shared(t)
			r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1})
			a := connect(t, r.url("postgres"))
			b := connect(t, r.url("postgres"))
			rvExec(t, a, "PREPARE "+name+" AS SELECT 'a-secret'")
			if got := rvSimple(t, b, "EXECUTE "+name); got == "a-secret" {
				t.Errorf("client b ran client a's SQL prepared statement %s: %q; on PostgreSQL it does not exist (26000)", name, got)
			}
			if got := rvSimple(t, a, "EXECUTE "+name); got != "a-secret" {
				t.Errorf("client a's own EXECUTE %s: %q", name, got)
			}
		})
	}
}

// The new PREPARE pattern matches "prepare <word> as" and
// "prepare <word> (" anywhere, outside literals and comments too: a CTE
// named prepare (WITH prepare AS (...)), an ordinary statement, pins the
// client to its server for the rest of its session. With a pool of one
// the next client then gets no server at all (53300), where before today
// both were served.
func TestTodayReviewCTENamedPreparePins(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1, timeout: time.Second})
	a := connect(t, r.url("postgres"))
	b := connect(t, r.url("postgres"))
	if got := rvSimple(t, a, "WITH prepare AS (SELECT 'x'::text AS v) SELECT v FROM prepare"); got != "x" {
		t.Fatalf("client a: %q", got)
	}
	if got := rvSimple(t, b, "select 'b'"); got != "b" {
		t.Errorf("client b after client a's CTE query: %q; want \"b\" (the statement leaves nothing on the server, so it must not pin)", got)
	}
}
