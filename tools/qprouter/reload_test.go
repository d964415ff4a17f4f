package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// A reload applies a changed [databases] table without dropping clients,
// as PgBouncer's RELOAD: an entry pointed at another server serves its
// new clients there, and its existing clients from their next
// transaction in transaction mode (a transaction under way finishes
// where it began) or from their next session in session mode; an added
// entry is served, a removed one refuses new clients with 3D000, an
// unchanged one keeps its server connections, and a bad table is
// refused with the old one kept. The auth query follows its database to
// the new server.
func TestDatabasesReload(t *testing.T) {
	c1 := pgtest.Shared(t)
	c2 := pgtest.Start(t, pgtest.Options{})
	serverExec(t, c2.URL(), "CREATE DATABASE two_real")
	before := fmt.Sprintf(`[databases]
mv = "postgres://127.0.0.1:%[1]d/postgres"
gone = "postgres://127.0.0.1:%[1]d/postgres"
stay = "postgres://127.0.0.1:%[1]d/postgres"
`, c1.Port)
	after := fmt.Sprintf(`[databases]
mv = "postgres://127.0.0.1:%[2]d/two_real"
stay = "postgres://127.0.0.1:%[1]d/postgres"
fresh = "postgres://127.0.0.1:%[2]d/postgres"
`, c1.Port, c2.Port)
	ctx := context.Background()
	for _, mode := range []string{"session", "transaction"} {
		t.Run(mode, func(t *testing.T) {
			cfgPath := filepath.Join(t.TempDir(), "qprouter.toml")
			write(t, cfgPath, before)
			addr, reload, stop := startWithHUP(t, "--config", cfgPath, "--pool-mode", mode)
			defer stop()
			at := func(db string) string { return "postgres://postgres@" + addr + "/" + db + "?sslmode=disable" }
			connect := func(db string) *pgx.Conn {
				t.Helper()
				cn, err := pgx.Connect(ctx, at(db))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cn.Close(ctx) })
				return cn
			}
			where := func(cn *pgx.Conn) (db string, port, pid int) {
				t.Helper()
				if err := cn.QueryRow(ctx, "SELECT current_database(), inet_server_port(), pg_backend_pid()").Scan(&db, &port, &pid); err != nil {
					t.Fatal(err)
				}
				return db, port, pid
			}
			idle, inTx, gone, stay := connect("mv"), connect("mv"), connect("gone"), connect("stay")
			for _, cn := range []*pgx.Conn{idle, inTx, gone} {
				if _, port, _ := where(cn); port != c1.Port {
					t.Fatalf("before the reload: port %d", port)
				}
			}
			_, _, stayPID := where(stay)
			if _, err := inTx.Exec(ctx, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			_, _, txPID := where(inTx)

			write(t, cfgPath, after)
			var moved []string
			for _, line := range strings.Split(reload("msg=reloaded"), "\n") {
				if _, db, ok := strings.Cut(line, "server changed; its server connections close as they come back\" database="); ok {
					moved = append(moved, db)
				}
			}
			if got := strings.Join(moved, " "); got != "gone mv" {
				t.Errorf("reload logged the databases %q as moved, want gone and mv", got)
			}

			// The transaction under way finishes on its server.
			if _, port, pid := where(inTx); port != c1.Port || pid != txPID {
				t.Errorf("in a transaction across the reload: port %d pid %d, want %d and %d", port, pid, c1.Port, txPID)
			}
			if _, err := inTx.Exec(ctx, "COMMIT"); err != nil {
				t.Fatal(err)
			}
			// Existing clients: moved at their next transaction in
			// transaction mode, on their server to the end in session mode.
			wantPort, wantDB := c2.Port, "two_real"
			if mode == "session" {
				wantPort, wantDB = c1.Port, "postgres"
			}
			for _, cn := range []*pgx.Conn{idle, inTx} {
				if db, port, _ := where(cn); db != wantDB || port != wantPort {
					t.Errorf("existing client of mv after the reload: %s on %d, want %s on %d", db, port, wantDB, wantPort)
				}
			}
			var one int
			err := gone.QueryRow(ctx, "SELECT 1").Scan(&one)
			var pe *pgconn.PgError
			switch {
			case mode == "session" && err != nil:
				t.Errorf("session client of a removed database lost its server: %v", err)
			case mode == "transaction" && (!errors.As(err, &pe) || pe.Code != "3D000"):
				t.Errorf("transaction client of a removed database: %v, want 3D000", err)
			}
			if _, _, pid := where(stay); pid != stayPID {
				t.Errorf("the unchanged database's client moved from backend %d to %d", stayPID, pid)
			}
			// New clients.
			checkServedBy(t, at("mv"), "two_real", "postgres", c2.Port)
			checkServedBy(t, at("fresh"), "postgres", "postgres", c2.Port)
			if _, err := pgx.Connect(ctx, at("gone")); !errors.As(err, &pe) || pe.Code != "3D000" {
				t.Errorf("new client of a removed database: %v, want 3D000", err)
			}

			// A bad table is refused and the old one stays.
			write(t, cfgPath, after+"bad = \"mysql://nowhere\"\n")
			reload("reload failed; keeping the old settings")
			checkServedBy(t, at("mv"), "two_real", "postgres", c2.Port)
		})
	}

	// The auth query's lookups follow their database to its new server: a
	// role only the second cluster has logs in once "aq" points there; a
	// new auth_query is used from the reload on.
	serverExec(t, c2.URL(), "SET password_encryption = 'scram-sha-256'", "CREATE ROLE dbr_two LOGIN PASSWORD 'two pw'")
	cfgPath := filepath.Join(t.TempDir(), "qprouter.toml")
	aqConfig := func(port int, query string) string {
		return fmt.Sprintf("auth_user = \"postgres\"\nauth_query = %q\n[databases]\naq = \"postgres://127.0.0.1:%d/postgres\"\n", query, port)
	}
	write(t, cfgPath, aqConfig(c1.Port, ""))
	addr, reload, stop := startWithHUP(t, "--config", cfgPath)
	defer stop()
	url := "postgres://dbr_two:two%20pw@" + addr + "/aq?sslmode=disable"
	if _, err := pgx.Connect(ctx, url); err == nil || !strings.Contains(err.Error(), "28P01") {
		t.Errorf("a role of the second cluster before the reload: %v", err)
	}
	write(t, cfgPath, aqConfig(c2.Port, ""))
	reload("msg=reloaded")
	checkServedBy(t, url, "postgres", "dbr_two", c2.Port)
	write(t, cfgPath, aqConfig(c2.Port, "SELECT usename, NULL FROM pg_shadow WHERE usename = $1"))
	reload("msg=reloaded")
	if _, err := pgx.Connect(ctx, url); err == nil || !strings.Contains(err.Error(), "28P01") {
		t.Errorf("an auth query giving no secret, after the reload: %v", err)
	}
}

// A reload that changes a database's forced user reaches its connected
// transaction-mode clients at their next transaction, as PgBouncer's
// force_user renames the pool's user in place; one that removes the
// forced user (the default server left) has them log in as themselves.
// Before, a connected client kept its pool, and so logged in as the old
// forced user, for as long as it stayed. Found by review
// (TestZZRouteReloadForcedUser*).
func TestDatabasesReloadForcedUser(t *testing.T) {
	c := pgtest.Shared(t)
	serverExec(t, c.URL(), "DROP ROLE IF EXISTS fu_rw", "DROP ROLE IF EXISTS fu_ro", "DROP ROLE IF EXISTS fu_bob",
		"CREATE ROLE fu_rw LOGIN", "CREATE ROLE fu_ro LOGIN", "CREATE ROLE fu_bob LOGIN")
	forced := func(user string) string {
		return fmt.Sprintf("server_url = \"postgres://127.0.0.1:%[1]d/postgres\"\n[databases]\npostgres = \"postgres://%[2]s@127.0.0.1:%[1]d/postgres\"\n", c.Port, user)
	}
	ctx := context.Background()
	cfgPath := filepath.Join(t.TempDir(), "qprouter.toml")
	write(t, cfgPath, forced("fu_rw"))
	addr, reload, stop := startWithHUP(t, "--config", cfgPath, "--pool-mode", "transaction")
	defer stop()
	cn, err := pgx.Connect(ctx, "postgres://fu_bob@"+addr+"/postgres?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close(ctx)
	who := func() string {
		t.Helper()
		var u string
		if err := cn.QueryRow(ctx, "SELECT current_user").Scan(&u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	if u := who(); u != "fu_rw" {
		t.Fatalf("before the reload: %s", u)
	}
	write(t, cfgPath, forced("fu_ro"))
	reload("msg=reloaded")
	if u := who(); u != "fu_ro" {
		t.Errorf("connected client after the forced user changed to fu_ro: runs as %s", u)
	}
	write(t, cfgPath, fmt.Sprintf("server_url = \"postgres://127.0.0.1:%d/postgres\"\n", c.Port))
	reload("msg=reloaded")
	if u := who(); u != "fu_bob" {
		t.Errorf("connected client fu_bob after its database's forced user went: runs as %s", u)
	}
}
