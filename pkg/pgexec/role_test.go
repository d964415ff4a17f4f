// Test of the SELECT-only role recipe in docs/pgexec.md.

package pgexec

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// readerRoleSQL is the recipe from docs/pgexec.md (without a password:
// the test cluster trusts local connections).
const readerRoleSQL = `
DROP ROLE IF EXISTS mcpg_reader;
CREATE ROLE mcpg_reader LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION CONNECTION LIMIT 10;
GRANT pg_read_all_data TO mcpg_reader;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
REVOKE TEMPORARY ON DATABASE postgres FROM PUBLIC;
ALTER ROLE mcpg_reader SET default_transaction_read_only = on;
ALTER ROLE mcpg_reader SET statement_timeout = '30s';
ALTER ROLE mcpg_reader SET idle_in_transaction_session_timeout = '60s';
`

func TestSelectOnlyRole(t *testing.T) {
	a := admin(t)
	mustExec(t, a, "DROP TABLE IF EXISTS role_canary; CREATE TABLE role_canary (v int); INSERT INTO role_canary VALUES (7)")
	mustExec(t, a, readerRoleSQL)
	u, err := url.Parse(pgtest.Shared(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User("mcpg_reader")

	pool, err := NewPool(testCtx(t), u.String(), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	e := newExec(t, pool, Options{})
	res := run(t, e, "SELECT v, current_user AS u FROM role_canary")
	if want := `"rows":[[7,"mcpg_reader"]]`; !contains(res.JSON, want) {
		t.Fatalf("%s", res.JSON)
	}

	// Without the executor, the role alone still refuses writes: first by
	// its read-only default, then, with that switched off, by privileges.
	conn, err := pgx.Connect(testCtx(t), u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, c := range []struct{ sql, code string }{
		{"INSERT INTO role_canary VALUES (1)", "25006"},
		{"SET default_transaction_read_only = off", ""},
		{"INSERT INTO role_canary VALUES (1)", "42501"},
		{"CREATE TABLE role_pwned (a int)", "42501"},
		{"CREATE TEMP TABLE role_pwned (a int)", "42501"},
	} {
		if c.code == "" {
			mustExec(t, conn, c.sql)
			continue
		}
		_, err := conn.Exec(testCtx(t), c.sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != c.code {
			t.Errorf("%s: got %v, want SQLSTATE %s", c.sql, err, c.code)
		}
	}
	if n := queryInt(t, a, "SELECT count(*) FROM role_canary"); n != 1 {
		t.Fatalf("role_canary has %d rows", n)
	}
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }
