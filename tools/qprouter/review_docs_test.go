package main

// Review of qprouter's documented configuration (docs/qprouter.md,
// "Running qprouter" and "Switching from PgBouncer") against the code.

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func rvWrite(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// PgBouncer caps min_pool_size at the pool size ("The value is
// effectively capped at the pool size", doc/config.md; janitor.c launches
// connections only while cur < pool_min_pool_size && cur < pool_pool_size).
// A pgbouncer.ini with a global min_pool_size above one database's
// pool_size, or above default_pool_size, is valid in PgBouncer; qprouter
// refuses to start with it.
func TestDocsReviewBouncerMinPoolSizeCapped(t *testing.T) {
	for name, ini := range map[string]string{
		"per-database pool_size below global min_pool_size": "[databases]\n* = host=127.0.0.1\napp = host=127.0.0.1 pool_size=2\n[pgbouncer]\nauth_type = trust\nmin_pool_size = 5\n",
		"min_pool_size above default_pool_size":             "[databases]\n* = host=127.0.0.1\n[pgbouncer]\nauth_type = trust\ndefault_pool_size = 5\nmin_pool_size = 10\n",
	} {
		t.Run(name, func(t *testing.T) {
			p := rvWrite(t, "pgbouncer.ini", ini)
			if _, _, _, _, err := parse([]string{"--pgbouncer-ini", p}, io.Discard, io.Discard); err != nil {
				t.Errorf("a pgbouncer.ini PgBouncer accepts (min_pool_size capped at the pool size) is refused: %v", err)
			}
		})
	}
}

// In PgBouncer a [databases] entry's server_lifetime=0 (and
// max_db_connections=0, max_db_client_connections=0, and a [users]
// entry's max_user_connections=0) means "not set: use the [pgbouncer]
// value" (server.c pool_server_lifetime, database_max_connections,
// user_max_connections), and query_wait_timeout=-1 means "not set"
// (doc/config.md). qprouter maps an entry's server_lifetime=0 to 1 ns
// (every connection used once, then closed), its caps 0 to "no cap"
// (lifting the global cap), and refuses query_wait_timeout=-1.
func TestDocsReviewBouncerEntryZeroInherits(t *testing.T) {
	ini := rvWrite(t, "pgbouncer.ini", "[databases]\n* = host=127.0.0.1\n"+
		"app = host=127.0.0.1 server_lifetime=0 max_db_connections=0 max_db_client_connections=0\n"+
		"[users]\nbob = max_user_connections=0\n"+
		"[pgbouncer]\nauth_type = trust\nserver_lifetime = 1800\nmax_db_connections = 10\nmax_db_client_connections = 50\nmax_user_connections = 7\n")
	cfg, _, _, _, err := parse([]string{"--pgbouncer-ini", ini}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	app, bob := cfg.Pools["app"], cfg.Pools["*/bob"]
	if d := app.MaxLifetime; d != nil && *d != 30*time.Minute {
		t.Errorf("[databases] app server_lifetime=0 under server_lifetime = 1800: pools.app max_lifetime = %v, want PgBouncer's 30m0s (0 is \"not set\")", *d)
	}
	if n := app.MaxDBConnections; n != nil && *n != 10 {
		t.Errorf("[databases] app max_db_connections=0 under max_db_connections = 10: pools.app max_db_connections = %d (no cap), want 10", *n)
	}
	if n := app.MaxDBClients; n != nil && *n != 50 {
		t.Errorf("[databases] app max_db_client_connections=0 under 50: pools.app max_db_client_connections = %d (no cap), want 50", *n)
	}
	if n := bob.MaxUserConnections; n != nil && *n != 7 {
		t.Errorf("[users] bob max_user_connections=0 under max_user_connections = 7: pools.\"*/bob\" max_user_connections = %d (no cap), want 7", *n)
	}
	ini2 := rvWrite(t, "pgbouncer.ini", "[databases]\n* = host=127.0.0.1\napp = host=127.0.0.1 query_wait_timeout=-1\n[pgbouncer]\nauth_type = trust\n")
	if _, _, _, _, err := parse([]string{"--pgbouncer-ini", ini2}, io.Discard, io.Discard); err != nil {
		t.Errorf("[databases] app query_wait_timeout=-1 (PgBouncer: not set): %v", err)
	}
}

// "a duration written as a bare number is seconds, as in pgbouncer.ini:
// acquire_timeout = 30, here and in [pools] tables". At the top level
// acquire_timeout = 1.5 is 1.5s; in a [pools] table it stops the start.
func TestDocsReviewPoolsFractionalSeconds(t *testing.T) {
	p := rvWrite(t, "qprouter.toml", "server_url = \"postgres://127.0.0.1:5432/\"\nacquire_timeout = 1.5\n[pools.app]\nacquire_timeout = 1.5\n")
	cfg, _, _, _, err := parse([]string{"--config", p}, io.Discard, io.Discard)
	if err != nil {
		t.Fatalf("acquire_timeout = 1.5 in [pools.app] (top level: %s): %v", cfg.AcquireTimeout, err)
	}
	if d := cfg.Pools["app"].AcquireTimeout; d == nil || *d != 1500*time.Millisecond {
		t.Errorf("pools.app acquire_timeout = %v, want 1.5s", d)
	}
}

// `databases."*"` in --config "may stand for server_url", and a refused
// pgbouncer.ini value is replaced when --config sets that setting. Over a
// pgbouncer.ini whose [databases] `*` is valid this works; over one with
// no [databases] (only [pgbouncer] settings kept) or a refused `*`, the
// ini's refusal of server_url still stops the start.
func TestDocsReviewConfigStarOverIniWithoutServer(t *testing.T) {
	toml := rvWrite(t, "qprouter.toml", "[databases]\n\"*\" = \"postgres://127.0.0.1:5432/\"\n")
	for name, ini := range map[string]string{
		"no [databases]": "[pgbouncer]\nauth_type = trust\npool_mode = transaction\n",
		"refused *":      "[databases]\n* = host=127.0.0.1 dbname=x\n[pgbouncer]\nauth_type = trust\npool_mode = transaction\n",
	} {
		t.Run(name, func(t *testing.T) {
			p := rvWrite(t, "pgbouncer.ini", ini)
			cfg, _, _, _, err := parse([]string{"--pgbouncer-ini", p, "--config", toml}, io.Discard, io.Discard)
			if err != nil {
				t.Fatalf("--config databases.\"*\" over a pgbouncer.ini (%s): %v", name, err)
			}
			if cfg.PoolMode != "transaction" || cfg.Databases["*"] != "postgres://127.0.0.1:5432/" {
				t.Errorf("pool_mode %q, databases %v", cfg.PoolMode, cfg.Databases)
			}
		})
	}
}

// admin_users is "comma-separated on the command line, a list or a
// comma-separated string in the file" (pgbouncer.ini's spaces are
// dropped). In --config, admin_users = "alice, bob" makes " bob" the
// admin, so bob is refused by the console.
func TestDocsReviewAdminUsersCommaString(t *testing.T) {
	p := rvWrite(t, "qprouter.toml", "server_url = \"postgres://127.0.0.1:5432/\"\nadmin_users = \"alice, bob\"\nstats_users = \"carol, dave\"\n")
	cfg, _, _, _, err := parse([]string{"--config", p}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.AdminUsers, []string{"alice", "bob"}) || !reflect.DeepEqual(cfg.StatsUsers, []string{"carol", "dave"}) {
		t.Errorf("admin_users = \"alice, bob\", stats_users = \"carol, dave\": got %q and %q", cfg.AdminUsers, cfg.StatsUsers)
	}
}
