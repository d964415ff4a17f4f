package proxy_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// rvSimple runs sql with the simple protocol and returns the first column
// of the first row as text, or the error's text.
func rvSimple(t *testing.T, conn *pgx.Conn, sql string) string {
	t.Helper()
	var v string
	if err := conn.QueryRow(context.Background(), sql, pgx.QueryExecModeSimpleProtocol).Scan(&v); err != nil {
		return "error: " + err.Error()
	}
	return v
}

func rvExec(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql, pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// A client that, as a superuser, set a superuser-only parameter and then
// dropped its privileges with SET ROLE cannot have its settings replayed
// on another server in that order (the role first, then the parameter):
// the replay fails and the proxy runs the client's statement on the
// server as the previous client left it, with that client's settings and
// role. On PostgreSQL the client keeps its own role and settings.
func TestTxModeReviewReplayFailureLeaksState(t *testing.T) {
	compareClients(t, 2, []clientsStep{
		{0, query("set log_min_duration_statement = 0")},
		{0, query("set role pg_monitor")},
		{1, query("set search_path = zz_b_schema")},
		{1, query("select 1")},
		{0, query("select current_user, current_setting('search_path'), current_setting('log_min_duration_statement')")},
	}, clientsSetups[0], clientsSetups[3])
}

// "a statement starting with PREPARE" pins the client (docs/qprouter.md),
// but only a text that starts with PREPARE is recognised: behind a comment
// or another statement of the same Query, the SQL-level prepared statement
// stays on the server for the next client, which can EXECUTE it.
func TestTxModeReviewPrepareNotAtTextStartNotPinned(t *testing.T) {
	for _, sql := range []string{
		"/* app */ PREPARE zzq AS SELECT 'a-secret'",
		"SELECT 1; PREPARE zzq AS SELECT 'a-secret'",
	} {
		t.Run(sql, func(t *testing.T) {
			c := pgtest.Shared(t)
			r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1})
			a := connect(t, r.url("postgres"))
			b := connect(t, r.url("postgres"))
			rvExec(t, a, sql)
			if got := rvSimple(t, b, "EXECUTE zzq"); got == "a-secret" {
				t.Errorf("client b ran client a's SQL prepared statement: %q; on PostgreSQL it does not exist (26000)", got)
			}
			if got := rvSimple(t, a, "EXECUTE zzq"); got != "a-secret" {
				t.Errorf("client a's own EXECUTE: %q", got)
			}
		})
	}
}

// CREATE OR REPLACE TEMP VIEW makes a temporary object like CREATE TEMP
// VIEW, but does not pin: the next client on the server sees the view.
func TestTxModeReviewCreateOrReplaceTempViewNotPinned(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1})
	a := connect(t, r.url("postgres"))
	b := connect(t, r.url("postgres"))
	rvExec(t, a, "create or replace temp view zz_secret_v as select 'a-secret'::text as x")
	if got := rvSimple(t, b, "select x from zz_secret_v"); got == "a-secret" {
		t.Errorf("client b reads client a's temporary view: %q; on PostgreSQL it does not exist (42P01)", got)
	}
	if got := rvSimple(t, a, "select x from zz_secret_v"); got != "a-secret" {
		t.Errorf("client a's own view: %q", got)
	}
}

// SET SCHEMA is SET search_path, and SET NAMES is SET client_encoding,
// but they are tracked as settings of their own names ("schema",
// "names"): replayed on another server in name order, after RESET ALL,
// whichever sorts last wins, where on PostgreSQL the latest statement
// does (and a RESET of the real name is undone by the alias).
func TestTxModeReviewSetAliasReplay(t *testing.T) {
	t.Run("schema", func(t *testing.T) {
		compareClients(t, 2, []clientsStep{
			{0, query("set search_path = pg_catalog")},
			{0, query("set schema 'public'")},
			{1, query("select 1")}, // the server is reset for client 1
			{0, query("show search_path")},
			{0, query("set schema 'pg_catalog'")},
			{0, query("reset search_path")},
			{1, query("select 2")},
			{0, query("show search_path")},
		}, clientsSetups[0], clientsSetups[3])
	})
	t.Run("names", func(t *testing.T) {
		compareClients(t, 2, []clientsStep{
			{0, query("set names 'LATIN1'")},
			{0, query("set client_encoding = 'UTF8'")},
			{1, query("select 1")},
			{0, query("show client_encoding")},
		}, clientsSetups[0], clientsSetups[3])
	})
}

// RESET TIME ZONE is RESET timezone, and SET name TO DEFAULT (SET TIME
// ZONE DEFAULT, SET TIME ZONE LOCAL) is RESET name: on PostgreSQL all of
// them go back to the client's startup value (a TimeZone in the startup
// packet, as JDBC and libpq's PGTZ send, or JDBC's extra_float_digits=3).
// Through the proxy they go to the server's own default, which the
// client then keeps.
func TestTxModeReviewResetFormsStartupValue(t *testing.T) {
	c := pgtest.Shared(t)
	for _, tc := range []struct{ set, reset, show, want string }{
		{"set time zone 'America/New_York'", "reset time zone", "show timezone", "Asia/Tokyo"},
		{"set time zone 'America/New_York'", "set time zone default", "show timezone", "Asia/Tokyo"},
		{"set time zone 'America/New_York'", "set timezone to default", "show timezone", "Asia/Tokyo"},
		{"set extra_float_digits = 1", "set extra_float_digits to default", "show extra_float_digits", "3"},
	} {
		for _, where := range []string{"direct", "proxy"} {
			t.Run(tc.reset+"/"+where, func(t *testing.T) {
				params := "&timezone=Asia/Tokyo&extra_float_digits=3"
				url := c.URL() + params
				if where == "proxy" {
					r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1})
					url = r.url("postgres") + params
				}
				a := connect(t, url)
				rvExec(t, a, tc.set)
				rvExec(t, a, tc.reset)
				if got := rvSimple(t, a, tc.show); got != tc.want {
					t.Errorf("after %q: %q, want the startup value %q", tc.reset, got, tc.want)
				}
			})
		}
	}
}
