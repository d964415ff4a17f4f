package duckwire

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// showSetting reads one setting with SHOW.
func showSetting(t *testing.T, c *pgx.Conn, name string) string {
	t.Helper()
	var v string
	if err := c.QueryRow(context.Background(), "SHOW "+name).Scan(&v); err != nil {
		t.Fatalf("SHOW %s: %v", name, err)
	}
	return v
}

// wantSQLState checks that err is a server error with code whose message
// contains msg.
func wantSQLState(t *testing.T, what string, err error, code, msg string) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != code || !strings.Contains(pe.Message, msg) {
		t.Fatalf("%s: got %v, want %s with %q", what, err, code, msg)
	}
}

// qprouter's settings replay (pkg/proxy syncServer) runs as one Query.
func TestSetConfigRouterReplay(t *testing.T) {
	s := startServer(t, nil)
	c := connect(t, s.url, true)
	ctx := context.Background()
	replay := "SET SESSION AUTHORIZATION DEFAULT;\nRESET ALL;\n" +
		"SELECT pg_catalog.set_config('application_name', 'psql', false)\n;\n" +
		"SELECT pg_catalog.set_config('datestyle', 'iso, dmy', false)\n;\n" +
		"SET TimeZone = 'Europe/Paris'\n;\n"
	res, err := c.PgConn().Exec(ctx, replay).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, r := range res {
		tags = append(tags, r.CommandTag.String())
	}
	if got := strings.Join(tags, ","); got != "SET,RESET,SELECT 1,SELECT 1,SET" {
		t.Fatalf("tags %s", got)
	}
	if f := res[3].FieldDescriptions; len(f) != 1 || f[0].Name != "set_config" || f[0].DataTypeOID != 25 ||
		string(res[3].Rows[0][0]) != "ISO, DMY" {
		t.Fatalf("set_config answer: %+v %q", f, res[3].Rows)
	}
	for name, want := range map[string]string{"application_name": "psql", "DateStyle": "ISO, DMY", "TimeZone": "Europe/Paris", "session_authorization": "analyst"} {
		if got := showSetting(t, c, name); got != want {
			t.Errorf("SHOW %s = %q, want %q", name, got, want)
		}
	}
	if _, err := c.Exec(ctx, "RESET SESSION AUTHORIZATION"); err != nil {
		t.Fatal(err)
	}
	_, err = c.Exec(ctx, "SET SESSION AUTHORIZATION someone_else")
	wantSQLState(t, "SET SESSION AUTHORIZATION someone_else", err, "55P02", "session_authorization")
}

// Several set_config calls in one SELECT list, is_local true, and what
// SET refuses refused alike; arguments that are not literals refused.
func TestSetConfigCalls(t *testing.T) {
	s := startServer(t, nil)
	for _, simple := range []bool{true, false} {
		c := connect(t, s.url, simple)
		ctx := context.Background()
		var app, tz string
		if err := c.QueryRow(ctx, "SELECT set_config('application_name', 'two', false), pg_catalog.set_config('TimeZone', 'Asia/Tokyo', false) AS tz").Scan(&app, &tz); err != nil {
			t.Fatal(err)
		}
		if app != "two" || tz != "Asia/Tokyo" || showSetting(t, c, "application_name") != "two" || showSetting(t, c, "TimeZone") != "Asia/Tokyo" {
			t.Fatalf("several set_config: %q %q", app, tz)
		}

		// is_local: as SET LOCAL in a block; outside, for the statement only.
		var v string
		if err := c.QueryRow(ctx, "SELECT set_config('statement_timeout', '7s', true)").Scan(&v); err != nil || v != "7s" {
			t.Fatalf("local set_config outside a block: %q, %v", v, err)
		}
		if got := showSetting(t, c, "statement_timeout"); got != "0" {
			t.Fatalf("statement_timeout after a local set_config outside a block: %q", got)
		}
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.QueryRow(ctx, "SELECT set_config('statement_timeout', '5s', true)").Scan(&v); err != nil || v != "5s" {
			t.Fatalf("local set_config: %q, %v", v, err)
		}
		if got := showSetting(t, c, "statement_timeout"); got != "5s" {
			t.Fatalf("statement_timeout in the block: %q", got)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if got := showSetting(t, c, "statement_timeout"); got != "0" {
			t.Fatalf("statement_timeout after the block: %q", got)
		}

		// Refused as SET refuses it; the statement's other change undone.
		_, err = c.Exec(ctx, "SELECT set_config('application_name', 'three', false), set_config('DateStyle', 'German', false)")
		wantSQLState(t, "set_config DateStyle German", err, "0A000", "DateStyle")
		if got := showSetting(t, c, "application_name"); got != "two" {
			t.Fatalf("application_name after a failed set_config: %q", got)
		}
		_, err = c.Exec(ctx, "SELECT set_config('server_version', '9', false)")
		wantSQLState(t, "set_config server_version", err, "55P02", "server_version")

		for _, q := range []string{
			"SELECT set_config('application_name', 'x' || 'y', false)",
			"SELECT set_config('application_name', 'x', 1 = 1)",
			"SELECT set_config('application_name', current_user, false)",
		} {
			_, err = c.Exec(ctx, q)
			wantSQLState(t, q, err, "0A000", "set_config")
		}
		if !simple { // pgx's simple protocol sends the parameter as a literal
			_, err = c.Exec(ctx, "SELECT set_config('application_name', $1, false)", "p")
			wantSQLState(t, "set_config with a parameter", err, "0A000", "set_config")
		}
		if got := showSetting(t, c, "application_name"); got != "two" {
			t.Fatalf("application_name after refused calls: %q", got)
		}
	}
}
