package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

// consoleRows runs sql on a console connection and returns its columns
// ("name:oid") and rows by column name (NULL as "<null>").
func consoleRows(t *testing.T, cn *pgconn.PgConn, sql string) ([]string, []map[string]string) {
	t.Helper()
	rr, err := cn.Exec(context.Background(), sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	r := rr[0]
	var cols []string
	for _, f := range r.FieldDescriptions {
		cols = append(cols, f.Name+":"+strconv.Itoa(int(f.DataTypeOID)))
	}
	var rows []map[string]string
	for _, vals := range r.Rows {
		m := map[string]string{}
		for i, v := range vals {
			m[r.FieldDescriptions[i].Name] = string(v)
			if v == nil {
				m[r.FieldDescriptions[i].Name] = "<null>"
			}
		}
		rows = append(rows, m)
	}
	return cols, rows
}

// consoleErr runs sql and returns its error's SQLSTATE and message.
func consoleErr(t *testing.T, cn *pgconn.PgConn, sql string) (code, msg string) {
	t.Helper()
	_, err := cn.Exec(context.Background(), sql).ReadAll()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("%s: want a server error, got %v", sql, err)
	}
	return pe.Code, pe.Message
}

// find is the row whose column key is value.
func find(rows []map[string]string, key, value string) map[string]string {
	for _, r := range rows {
		if r[key] == value {
			return r
		}
	}
	return nil
}

// PgBouncer 1.18's console columns ("name:type OID"), as its console
// answers (text 25, int4 23, numeric 1700).
var (
	pgbPoolColumns = []string{"database:25", "user:25", "cl_active:23", "cl_waiting:23", "cl_active_cancel_req:23",
		"cl_waiting_cancel_req:23", "sv_active:23", "sv_active_cancel:23", "sv_being_canceled:23", "sv_idle:23", "sv_used:23",
		"sv_tested:23", "sv_login:23", "maxwait:23", "maxwait_us:23", "pool_mode:25"}
	pgbSocketColumns = []string{"type:25", "user:25", "database:25", "state:25", "addr:25", "port:23", "local_addr:25",
		"local_port:23", "connect_time:25", "request_time:25", "wait:23", "wait_us:23", "close_needed:23", "ptr:25", "link:25",
		"remote_pid:23", "tls:25", "application_name:25"}
	pgbDatabaseColumns = []string{"name:25", "host:25", "port:23", "database:25", "force_user:25", "pool_size:23",
		"min_pool_size:23", "reserve_pool:23", "pool_mode:25", "max_connections:23", "current_connections:23", "paused:23",
		"disabled:23"}
	pgbStatsColumns = []string{"database:25", "total_xact_count:1700", "total_query_count:1700", "total_received:1700",
		"total_sent:1700", "total_xact_time:1700", "total_query_time:1700", "total_wait_time:1700", "avg_xact_count:1700",
		"avg_query_count:1700", "avg_recv:1700", "avg_sent:1700", "avg_xact_time:1700", "avg_query_time:1700",
		"avg_wait_time:1700"}
)

// The admin console database (--admin-users, --stats-users), in both
// pool modes: PgBouncer's SHOW columns with the proxy's state, statistics
// that count what ran, PAUSE waiting for a transaction under way and
// holding queries until RESUME, roles, errors that leave the console
// usable, psql, and SHUTDOWN.
func TestConsole(t *testing.T) {
	c := pgtest.Shared(t)
	for _, mode := range []string{"transaction", "session"} {
		t.Run(mode, func(t *testing.T) {
			url, stop := startRouter(t, c.URL(), "--pool-mode", mode, "--pool-size", "2", "--admin-users", "boss",
				"--stats-users", "watcher,viewer")
			defer stop()
			addr := strings.TrimSuffix(strings.TrimPrefix(url, "postgres://postgres@"), "/postgres?sslmode=disable")
			bg := context.Background()
			consoleAs := func(user string) *pgconn.PgConn {
				t.Helper()
				cn, err := pgconn.Connect(bg, "postgres://"+user+"@"+addr+"/pgbouncer?sslmode=disable&application_name=console-test")
				if err != nil {
					t.Fatalf("console as %s: %v", user, err)
				}
				t.Cleanup(func() { cn.Close(bg) })
				return cn
			}
			app, err := pgx.Connect(bg, url+"&application_name=app-test")
			if err != nil {
				t.Fatal(err)
			}
			defer app.Close(bg)
			var pid int
			if err := app.QueryRow(bg, "select pg_backend_pid()").Scan(&pid); err != nil {
				t.Fatal(err)
			}
			boss := consoleAs("boss")

			cols, pools := consoleRows(t, boss, "SHOW POOLS")
			if !slices.Equal(cols, pgbPoolColumns) {
				t.Errorf("SHOW POOLS columns\n got %v\nwant %v", cols, pgbPoolColumns)
			}
			p := find(pools, "database", "postgres")
			if p == nil || p["user"] != "postgres" || p["pool_mode"] != mode || p["cl_active"] != "1" || p["cl_waiting"] != "0" {
				t.Errorf("SHOW POOLS: %v", pools)
			}
			// The console's own clients: a pool of their own, as PgBouncer's.
			if a := find(pools, "database", "pgbouncer"); a == nil || a["user"] != "pgbouncer" || a["cl_active"] != "1" || a["pool_mode"] != "statement" {
				t.Errorf("SHOW POOLS: no console pool with one client: %v", pools)
			}
			if mode == "transaction" && (p["sv_idle"] != "1" || p["sv_active"] != "0") {
				t.Errorf("transaction mode, no transaction: want one idle server, got %v", p)
			}
			if mode == "session" && (p["sv_idle"] != "0" || p["sv_active"] != "1") {
				t.Errorf("session mode: want the client's server active, got %v", p)
			}

			cols, clients := consoleRows(t, boss, "SHOW CLIENTS")
			if !slices.Equal(cols, pgbSocketColumns) {
				t.Errorf("SHOW CLIENTS columns\n got %v\nwant %v", cols, pgbSocketColumns)
			}
			cl := find(clients, "application_name", "app-test")
			if cl == nil || cl["type"] != "C" || cl["user"] != "postgres" || cl["database"] != "postgres" || cl["addr"] != "127.0.0.1" ||
				cl["local_port"] != addr[strings.LastIndex(addr, ":")+1:] || cl["state"] != "active" {
				t.Errorf("SHOW CLIENTS: %v", clients)
			}
			if a := find(clients, "user", "boss"); a == nil || a["database"] != "pgbouncer" || a["state"] != "active" || a["application_name"] != "console-test" || a["link"] != "" {
				t.Errorf("SHOW CLIENTS: no console client: %v", clients)
			}
			cols, servers := consoleRows(t, boss, "SHOW SERVERS")
			if !slices.Equal(cols, pgbSocketColumns) {
				t.Errorf("SHOW SERVERS columns\n got %v", cols)
			}
			sv := find(servers, "remote_pid", strconv.Itoa(pid))
			if sv == nil || sv["type"] != "S" || sv["database"] != "postgres" || sv["port"] != strconv.Itoa(c.Port) {
				t.Errorf("SHOW SERVERS: no server with the backend's pid %d: %v", pid, servers)
			} else if mode == "session" && (sv["state"] != "active" || sv["link"] != cl["ptr"]) {
				t.Errorf("session mode: the server should be the client's (link %s): %v", cl["ptr"], sv)
			}

			cols, dbs := consoleRows(t, boss, "SHOW DATABASES")
			if !slices.Equal(cols, pgbDatabaseColumns) {
				t.Errorf("SHOW DATABASES columns\n got %v", cols)
			}
			if d := find(dbs, "name", "postgres"); d == nil || d["pool_size"] != "2" || d["port"] != strconv.Itoa(c.Port) || d["paused"] != "0" {
				t.Errorf("SHOW DATABASES: %v", dbs)
			}

			// The statistics count what ran: three statements (three
			// transactions) and a transaction of two statements.
			statsOf := func(db string) map[string]string {
				cols, rows := consoleRows(t, boss, "SHOW STATS")
				if !slices.Equal(cols, pgbStatsColumns) {
					t.Errorf("SHOW STATS columns\n got %v", cols)
				}
				return find(rows, "database", db)
			}
			stats := func() map[string]string { return statsOf("postgres") }
			before := stats()
			for range 3 {
				if _, err := app.Exec(bg, "select 1"); err != nil {
					t.Fatal(err)
				}
			}
			tx, err := app.Begin(bg)
			if err != nil {
				t.Fatal(err)
			}
			tx.Exec(bg, "select 2")
			time.Sleep(150 * time.Millisecond) // in the transaction, between statements
			if err := tx.Commit(bg); err != nil {
				t.Fatal(err)
			}
			after := stats()
			delta := func(k string) int {
				a, _ := strconv.Atoi(after[k])
				b, _ := strconv.Atoi(before[k])
				return a - b
			}
			// pgx's Begin and Commit are statements too: 3 + 3 queries.
			// The transaction's time counts the client's pause; the
			// queries' does not.
			if delta("total_xact_count") != 4 || delta("total_query_count") != 6 || delta("total_received") <= 0 || delta("total_sent") <= 0 ||
				delta("total_xact_time") < 150000 || delta("total_query_time") >= 150000 {
				t.Errorf("SHOW STATS before %v\nafter %v", before, after)
			}

			// Bytes are counted per database: a 100 kB answer is bytes sent
			// to the clients of postgres, none to those of template1.
			other, err := pgx.Connect(bg, strings.Replace(url, "/postgres?", "/template1?", 1))
			if err != nil {
				t.Fatal(err)
			}
			before, otherBefore := stats(), statsOf("template1")
			const bigQuery = "SELECT repeat('x', 100000)"
			var big string
			if err := app.QueryRow(bg, bigQuery).Scan(&big); err != nil {
				t.Fatal(err)
			}
			// The proxy counts a write once it returns, which may be after
			// the client read it.
			var otherAfter map[string]string
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				after, otherAfter = stats(), statsOf("template1")
				if delta("total_sent") >= 100000 || time.Now().After(deadline) {
					break
				}
			}
			if delta("total_sent") < 100000 || delta("total_sent") > 101000 || delta("total_received") < len(bigQuery) || delta("total_received") > 1000 {
				t.Errorf("bytes of a 100 kB answer: received %d, sent %d", delta("total_received"), delta("total_sent"))
			}
			if otherAfter == nil || otherAfter["total_sent"] != otherBefore["total_sent"] || otherAfter["total_received"] != otherBefore["total_received"] {
				t.Errorf("bytes of template1's client, which sent nothing: before %v, after %v", otherBefore, otherAfter)
			}
			other.Close(bg)

			state := func() string {
				cols, rows := consoleRows(t, boss, "SHOW STATE")
				var kv []string
				for _, r := range rows {
					kv = append(kv, r["key"]+"="+r["value"])
				}
				if !slices.Equal(cols, []string{"key:25", "value:25"}) {
					t.Errorf("SHOW STATE columns %v", cols)
				}
				return strings.Join(kv, " ")
			}
			if got := state(); got != "active=yes paused=no suspended=no" {
				t.Errorf("SHOW STATE: %s", got)
			}

			// PAUSE waits for the transaction under way, then holds new
			// queries until RESUME.
			tx, err = app.Begin(bg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(bg, "select 3"); err != nil {
				t.Fatal(err)
			}
			paused := make(chan error, 1)
			go func() {
				_, err := boss.Exec(bg, "PAUSE postgres").ReadAll()
				paused <- err
			}()
			if mode == "transaction" {
				select {
				case err := <-paused:
					t.Fatalf("PAUSE returned with a transaction under way: %v", err)
				case <-time.After(300 * time.Millisecond):
				}
				if err := tx.Commit(bg); err != nil {
					t.Fatal(err)
				}
				if err := <-paused; err != nil {
					t.Fatalf("PAUSE: %v", err)
				}
				done := make(chan error, 1)
				go func() {
					_, err := app.Exec(bg, "select 4")
					done <- err
				}()
				select {
				case err := <-done:
					t.Fatalf("a query ran while paused: %v", err)
				case <-time.After(300 * time.Millisecond):
				}
				watcher := consoleAs("watcher")
				_, pools = consoleRows(t, watcher, "SHOW POOLS")
				_, dbs = consoleRows(t, watcher, "SHOW DATABASES")
				if p := find(pools, "database", "postgres"); p["cl_waiting"] != "1" || find(dbs, "name", "postgres")["paused"] != "1" {
					t.Errorf("paused: pools %v, databases %v", pools, dbs)
				}
				_, clients := consoleRows(t, watcher, "SHOW CLIENTS")
				a := find(clients, "application_name", "app-test")
				s, _ := strconv.Atoi(a["wait"])
				us, _ := strconv.Atoi(a["wait_us"])
				// The 300 ms above started before the query left the
				// client, so its wait is a little shorter (297.9 ms once,
				// in CI): 200 ms is the floor.
				if a["state"] != "waiting" || s*1000000+us < 200000 || us >= 1000000 {
					t.Errorf("SHOW CLIENTS: the client held by PAUSE for about 300 ms: %v", a)
				}
				if _, err := boss.Exec(bg, "RESUME postgres").ReadAll(); err != nil {
					t.Fatal(err)
				}
				if err := <-done; err != nil {
					t.Fatalf("the held query: %v", err)
				}
			} else {
				// Session mode: the client keeps its server, so PAUSE waits
				// for it to leave, as PgBouncer's.
				tx.Commit(bg)
				select {
				case err := <-paused:
					t.Fatalf("PAUSE returned while a session-mode client holds its server: %v", err)
				case <-time.After(300 * time.Millisecond):
				}
				app.Close(bg)
				if err := <-paused; err != nil {
					t.Fatalf("PAUSE: %v", err)
				}
				if got := state(); got != "active=yes paused=no suspended=no" { // one database paused: as PgBouncer's
					t.Errorf("SHOW STATE after PAUSE postgres: %s", got)
				}
				if _, err := boss.Exec(bg, "RESUME").ReadAll(); err != nil {
					t.Fatal(err)
				}
				if _, err := boss.Exec(bg, "PAUSE").ReadAll(); err != nil {
					t.Fatal(err)
				}
				if got := state(); got != "active=no paused=yes suspended=no" {
					t.Errorf("SHOW STATE after PAUSE: %s", got)
				}
				if _, err := boss.Exec(bg, "RESUME").ReadAll(); err != nil {
					t.Fatal(err)
				}
				if got := state(); got != "active=yes paused=no suspended=no" {
					t.Errorf("SHOW STATE after RESUME: %s", got)
				}
			}

			// Roles and errors; each leaves the console usable.
			viewer := consoleAs("viewer")
			if code, msg := consoleErr(t, viewer, "PAUSE"); code != "08P01" || msg != "admin access needed" {
				t.Errorf("PAUSE as a stats user: %s %s", code, msg)
			}
			if _, err := pgconn.Connect(bg, "postgres://nobody@"+addr+"/pgbouncer?sslmode=disable"); err == nil || !strings.Contains(err.Error(), "not allowed") {
				t.Errorf("a user in neither list: %v", err)
			}
			for sql, want := range map[string]string{
				"select 1":               "invalid command 'select 1', use SHOW HELP;",
				"SHOW pools; SHOW lists": "invalid command 'SHOW pools; SHOW lists', use SHOW HELP;",
				"PAUSE nosuch":           `no pool of database "nosuch" (qprouter pauses the pools a database has)`,
				"SUSPEND":                "SUSPEND is not supported by qprouter's console (supported: SHOW, SET, PAUSE, RESUME, KILL, KILL_CLIENT, DISABLE, ENABLE, RECONNECT, WAIT_CLOSE, RELOAD, SHUTDOWN)",
			} {
				if _, msg := consoleErr(t, boss, sql); msg != want {
					t.Errorf("%s: %q, want %q", sql, msg, want)
				}
			}
			// pgx's default: the extended protocol, refused until Sync.
			px, err := pgx.Connect(bg, "postgres://boss@"+addr+"/pgbouncer?sslmode=disable")
			if err != nil {
				t.Fatal(err)
			}
			defer px.Close(bg)
			var version string
			if err := px.QueryRow(bg, "SHOW VERSION").Scan(&version); err == nil || !strings.Contains(err.Error(), "simple query protocol only") {
				t.Errorf("extended protocol: %v", err)
			}
			if _, err := px.Exec(bg, "SHOW LISTS", pgx.QueryExecModeSimpleProtocol); err != nil {
				t.Errorf("simple protocol after the refusal: %v", err)
			}
			if res, err := boss.Exec(bg, "reload;").ReadAll(); err != nil || res[0].CommandTag.String() != "RELOAD" {
				t.Errorf("RELOAD: %v %v", res, err)
			}
			_, conf := consoleRows(t, viewer, "SHOW CONFIG")
			if r := find(conf, "key", "pool_size"); r == nil || r["value"] != "2" || r["default"] != "20" || r["changeable"] != "yes" {
				t.Errorf("SHOW CONFIG pool_size: %v", r)
			}
			if r := find(conf, "key", "default_pool_size"); r == nil || r["value"] != "2" || r["default"] != "20" { // PgBouncer's name
				t.Errorf("SHOW CONFIG default_pool_size: %v", r)
			}
			if r := find(conf, "key", "query_wait_timeout"); r == nil || r["value"] != "30" || r["default"] != "5" { // --acquire-timeout 30s, in seconds
				t.Errorf("SHOW CONFIG query_wait_timeout: %v", r)
			}
			if r := find(conf, "key", "idle_timeout"); r == nil || r["value"] != "10m0s" || r["default"] != "10m0s" || r["changeable"] != "yes" {
				t.Errorf("SHOW CONFIG idle_timeout: %v", r)
			}
			if r := find(conf, "key", "listen"); r == nil || r["default"] != "127.0.0.1:6432" || r["changeable"] != "no" {
				t.Errorf("SHOW CONFIG listen: %v", r)
			}
			if r := find(conf, "key", "server_round_robin"); r == nil || r["value"] != "false" || r["default"] != "false" {
				t.Errorf("SHOW CONFIG server_round_robin: %v", r)
			}
			_, lists := consoleRows(t, viewer, "show lists")
			if l := find(lists, "list", "pools"); l == nil || l["items"] != "3" { // postgres, template1 and the console's
				t.Errorf("SHOW LISTS: %v", lists)
			}

			// psql, as a PgBouncer user types it.
			host, port, _ := net.SplitHostPort(addr)
			out, err := exec.Command("psql", "-X", "-At", "-h", host, "-p", port, "-U", "boss", "-d", "pgbouncer", "-c", "SHOW VERSION").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "qprouter") {
				t.Errorf("psql SHOW VERSION: %v: %s", err, out)
			}

			// SHUTDOWN drains and stops the proxy.
			if _, err := boss.Exec(bg, "SHUTDOWN").ReadAll(); err != nil {
				t.Errorf("SHUTDOWN: %v", err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				nc, err := net.DialTimeout("tcp", addr, time.Second)
				if err != nil {
					break
				}
				nc.Close()
				if time.Now().After(deadline) {
					t.Fatal("still listening 10 s after SHUTDOWN")
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// Without --admin-users or --stats-users, "pgbouncer" is a database like
// any other: the server answers for it.
func TestNoConsole(t *testing.T) {
	c := pgtest.Shared(t)
	url, stop := startRouter(t, c.URL())
	defer stop()
	_, err := pgx.Connect(context.Background(), strings.Replace(url, "/postgres?", "/pgbouncer?", 1))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "3D000" || !strings.Contains(pe.Message, `database "pgbouncer" does not exist`) {
		t.Errorf("want PostgreSQL's 3D000, got %v", err)
	}
}

// With an auth file, console users log in with its passwords, and users
// missing from it are refused without an auth query.
func TestConsoleAuthFile(t *testing.T) {
	c := pgtest.Shared(t)
	users := filepath.Join(t.TempDir(), "users.txt")
	if err := os.WriteFile(users, []byte("\"boss\" \"secret\"\n\"postgres\" \"pw\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A role the server has, and the auth query would find: the console
	// does not look it up.
	bg := context.Background()
	db, err := pgx.Connect(bg, c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(bg)
	if _, err := db.Exec(bg, `DO $$ BEGIN
		IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'console_ghost') THEN CREATE ROLE console_ghost LOGIN PASSWORD 'x'; END IF;
	END $$`); err != nil {
		t.Fatal(err)
	}
	url, stop := startRouter(t, c.URL(), "--auth-file", users, "--admin-users", "boss,console_ghost", "--auth-user", "postgres")
	defer stop()
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "postgres://postgres@"), "/postgres?sslmode=disable")
	if cn, err := pgconn.Connect(bg, "postgres://console_ghost:x@"+addr+"/postgres?sslmode=disable"); err != nil {
		t.Fatalf("the auth query should find console_ghost for a server database: %v", err)
	} else {
		cn.Close(bg)
	}
	cn, err := pgconn.Connect(bg, "postgres://boss:secret@"+addr+"/pgbouncer?sslmode=disable")
	if err != nil {
		t.Fatalf("boss with its password: %v", err)
	}
	defer cn.Close(bg)
	if _, rows := consoleRows(t, cn, "SHOW USERS"); find(rows, "name", "boss") == nil {
		t.Errorf("SHOW USERS: %v", rows)
	}
	for _, u := range []string{"boss:wrong", "console_ghost:x"} {
		if _, err := pgconn.Connect(bg, "postgres://"+u+"@"+addr+"/pgbouncer?sslmode=disable"); err == nil || !strings.Contains(err.Error(), "password authentication failed") {
			t.Errorf("%s: want a failed password, got %v", u, err)
		}
	}
}

// consoleRouter starts qprouter in mode with pool size 2 and admin user
// boss, and returns its client URL and boss's console connection.
func consoleRouter(t *testing.T, c *pgtest.Cluster, mode string) (string, *pgconn.PgConn) {
	t.Helper()
	url, stop := startRouter(t, c.URL(), "--pool-mode", mode, "--pool-size", "2", "--admin-users", "boss")
	t.Cleanup(stop)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "postgres://postgres@"), "/postgres?sslmode=disable")
	boss, err := pgconn.Connect(context.Background(), "postgres://boss@"+addr+"/pgbouncer?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { boss.Close(context.Background()) })
	return url, boss
}

// DISABLE refuses new clients of a database with PgBouncer's FATAL and
// keeps its clients; ENABLE lets them in again. RECONNECT closes the idle
// server connections at once and a client's when it comes back (SHOW
// SERVERS' close_needed meanwhile), in both pool modes.
func TestConsoleDisableReconnect(t *testing.T) {
	c := pgtest.Shared(t)
	for _, mode := range []string{"transaction", "session"} {
		t.Run(mode, func(t *testing.T) {
			url, boss := consoleRouter(t, c, mode)
			bg := context.Background()
			run := func(sql string) {
				t.Helper()
				if _, err := boss.Exec(bg, sql).ReadAll(); err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
			}
			app, err := pgx.Connect(bg, url)
			if err != nil {
				t.Fatal(err)
			}
			defer app.Close(bg)
			pid := func(cn *pgx.Conn) int {
				t.Helper()
				var n int
				if err := cn.QueryRow(bg, "select pg_backend_pid()", pgx.QueryExecModeSimpleProtocol).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			first := pid(app)

			run("DISABLE postgres")
			_, err = pgx.Connect(bg, url)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Severity != "FATAL" || pe.Code != "08P01" || pe.Message != `database "postgres" is disabled` {
				t.Errorf("a new client of a disabled database: %v", err)
			}
			if _, dbs := consoleRows(t, boss, "SHOW DATABASES"); find(dbs, "name", "postgres")["disabled"] != "1" {
				t.Errorf("SHOW DATABASES: %v", dbs)
			}
			if pid(app) != first {
				t.Error("the connected client lost its server")
			}
			run("ENABLE postgres")
			other, err := pgx.Connect(bg, url)
			if err != nil {
				t.Fatalf("after ENABLE: %v", err)
			}
			other.Close(bg)

			run("RECONNECT postgres")
			if mode == "transaction" {
				// The server was idle between transactions: closed at once.
				if p := pid(app); p == first {
					t.Errorf("after RECONNECT the client still runs on backend %d", p)
				}
				return
			}
			// Session mode: the client keeps its server until it leaves.
			if _, servers := consoleRows(t, boss, "SHOW SERVERS"); find(servers, "remote_pid", strconv.Itoa(first))["close_needed"] != "1" {
				t.Errorf("SHOW SERVERS after RECONNECT: %v", servers)
			}
			if pid(app) != first {
				t.Error("RECONNECT took a session-mode client's server")
			}
			// WAIT_CLOSE answers once that server is gone.
			waited := make(chan error, 1)
			go func() {
				_, err := boss.Exec(bg, "WAIT_CLOSE postgres").ReadAll()
				waited <- err
			}()
			select {
			case err := <-waited:
				t.Fatalf("WAIT_CLOSE returned while the server was still the client's: %v", err)
			case <-time.After(300 * time.Millisecond):
			}
			app.Close(bg)
			if err := <-waited; err != nil {
				t.Fatalf("WAIT_CLOSE: %v", err)
			}
			if _, servers := consoleRows(t, boss, "SHOW SERVERS"); find(servers, "remote_pid", strconv.Itoa(first)) != nil {
				t.Errorf("after WAIT_CLOSE the old server is still listed: %v", servers)
			}
			next, err := pgx.Connect(bg, url)
			if err != nil {
				t.Fatal(err)
			}
			defer next.Close(bg)
			if p := pid(next); p == first {
				t.Errorf("the server marked by RECONNECT went back to the pool (backend %d)", p)
			}
		})
	}
}

// KILL closes a database's clients at once, rolling a transaction under
// way back on the server, and holds new clients until RESUME; another
// database's clients go on.
func TestConsoleKill(t *testing.T) {
	c := pgtest.Shared(t)
	for _, mode := range []string{"transaction", "session"} {
		t.Run(mode, func(t *testing.T) {
			url, boss := consoleRouter(t, c, mode)
			bg := context.Background()
			direct, err := pgx.Connect(bg, c.URL())
			if err != nil {
				t.Fatal(err)
			}
			defer direct.Close(bg)
			victim, err := pgx.Connect(bg, url)
			if err != nil {
				t.Fatal(err)
			}
			defer victim.Close(bg)
			bystander, err := pgx.Connect(bg, strings.Replace(url, "/postgres?", "/template1?", 1))
			if err != nil {
				t.Fatal(err)
			}
			defer bystander.Close(bg)
			if _, err := victim.Exec(bg, "begin"); err != nil {
				t.Fatal(err)
			}
			var pid int
			if err := victim.QueryRow(bg, "select pg_backend_pid()").Scan(&pid); err != nil {
				t.Fatal(err)
			}
			// A query that writes nothing until it ends: the kill must
			// stop it, not only close its socket.
			slept := make(chan error, 1)
			go func() {
				_, err := victim.Exec(bg, "select pg_sleep(30)")
				slept <- err
			}()
			for range 100 {
				var n int
				direct.QueryRow(bg, "select count(*) from pg_stat_activity where pid = $1 and query like 'select pg_sleep%'", pid).Scan(&n)
				if n == 1 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if res, err := boss.Exec(bg, "KILL postgres").ReadAll(); err != nil || res[0].CommandTag.String() != "KILL" {
				t.Fatalf("KILL: %v %v", res, err)
			}
			select {
			case err := <-slept:
				if err == nil {
					t.Error("the killed client's query ended well")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the killed client's query still runs 10 s after KILL")
			}
			gone := false
			for range 100 {
				var n int
				if err := direct.QueryRow(bg, "select count(*) from pg_stat_activity where pid = $1", pid).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if gone = n == 0; gone {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if !gone {
				t.Errorf("the killed client's backend %d still runs", pid)
			}
			if _, err := bystander.Exec(bg, "select 1"); err != nil {
				t.Errorf("another database's client: %v", err)
			}
			// A new client of the killed database waits for RESUME.
			done := make(chan error, 1)
			go func() {
				cn, err := pgx.Connect(bg, url)
				if err == nil {
					_, err = cn.Exec(bg, "select 1")
					cn.Close(bg)
				}
				done <- err
			}()
			select {
			case err := <-done:
				t.Fatalf("a new client was served before RESUME: %v", err)
			case <-time.After(300 * time.Millisecond):
			}
			if _, err := boss.Exec(bg, "RESUME postgres").ReadAll(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Errorf("the new client after RESUME: %v", err)
			}
			if code, msg := consoleErr(t, boss, "KILL nosuch"); code != "08P01" || !strings.Contains(msg, "no pool of database") {
				t.Errorf("KILL nosuch: %s %s", code, msg)
			}
		})
	}
}

// The console's user lists come from the config file and a reload rereads
// them: a user added becomes an admin, one removed is refused.
func TestConsoleUsersReload(t *testing.T) {
	c := pgtest.Shared(t)
	cfgPath := filepath.Join(t.TempDir(), "qprouter.toml")
	write(t, cfgPath, fmt.Sprintf("server_url = %q\nadmin_users = [\"alice\"]\nstats_users = \"carol\"\n", c.URL()))
	addr, reload, stop := startWithHUP(t, "--config", cfgPath)
	defer stop()
	bg := context.Background()
	login := func(user string) error {
		cn, err := pgconn.Connect(bg, "postgres://"+user+"@"+addr+"/pgbouncer?sslmode=disable")
		if err == nil {
			_, err = cn.Exec(bg, "PAUSE").ReadAll()
			cn.Exec(bg, "RESUME").ReadAll()
			cn.Close(bg)
		}
		return err
	}
	if err := login("alice"); err != nil {
		t.Errorf("alice from the file's list: %v", err)
	}
	if err := login("carol"); err == nil || !strings.Contains(err.Error(), "admin access needed") {
		t.Errorf("carol, a stats user: %v", err)
	}
	if err := login("bob"); err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Errorf("bob before the reload: %v", err)
	}
	write(t, cfgPath, fmt.Sprintf("server_url = %q\nadmin_users = [\"bob\"]\n", c.URL()))
	reload("reloaded")
	if err := login("bob"); err != nil {
		t.Errorf("bob after the reload: %v", err)
	}
	if err := login("alice"); err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Errorf("alice after the reload: %v", err)
	}
}

// KILL_CLIENT closes one client, by SHOW CLIENTS' ptr, with its server
// connection at once, even in the middle of a query; the other clients
// go on.
func TestConsoleKillClient(t *testing.T) {
	c := pgtest.Shared(t)
	bg := context.Background()
	for _, mode := range []string{"transaction", "session"} {
		t.Run(mode, func(t *testing.T) {
			url, stop := startRouter(t, c.URL(), "--pool-mode", mode, "--admin-users", "boss")
			defer stop()
			victim, err := pgx.Connect(bg, url+"&application_name=kill-victim")
			if err != nil {
				t.Fatal(err)
			}
			defer victim.Close(bg)
			keeper, err := pgx.Connect(bg, url+"&application_name=kill-keeper")
			if err != nil {
				t.Fatal(err)
			}
			defer keeper.Close(bg)
			addr := strings.TrimSuffix(strings.TrimPrefix(url, "postgres://postgres@"), "/postgres?sslmode=disable")
			boss, err := pgconn.Connect(bg, "postgres://boss@"+addr+"/pgbouncer?sslmode=disable")
			if err != nil {
				t.Fatal(err)
			}
			defer boss.Close(bg)

			// The backend running the victim's query (in transaction mode
			// not necessarily the one of its previous query).
			var pid int
			sleeping := make(chan error, 1)
			go func() { _, err := victim.Exec(bg, "SELECT pg_sleep(60) -- kill-victim"); sleeping <- err }()
			waitFor(t, "the victim's query running", func() bool {
				keeper.QueryRow(bg, "SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60) -- kill-victim'").Scan(&pid)
				return pid != 0
			})
			_, clients := consoleRows(t, boss, "SHOW CLIENTS")
			v := find(clients, "application_name", "kill-victim")
			if v == nil {
				t.Fatalf("no victim in SHOW CLIENTS: %v", clients)
			}
			if _, err := boss.Exec(bg, "KILL_CLIENT "+v["ptr"]).ReadAll(); err != nil {
				t.Fatalf("KILL_CLIENT %s: %v", v["ptr"], err)
			}
			select {
			case err := <-sleeping:
				if err == nil {
					t.Error("the killed client's query succeeded")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the killed client's query still runs 10 s after KILL_CLIENT")
			}
			waitFor(t, "the killed client's backend gone", func() bool {
				var n int
				keeper.QueryRow(bg, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&n)
				return n == 0
			})
			waitFor(t, "the killed client gone from SHOW CLIENTS", func() bool {
				_, clients = consoleRows(t, boss, "SHOW CLIENTS")
				return find(clients, "application_name", "kill-victim") == nil
			})
			if find(clients, "application_name", "kill-keeper") == nil {
				t.Errorf("SHOW CLIENTS after KILL_CLIENT lost the other client: %v", clients)
			}
			if _, err := keeper.Exec(bg, "SELECT 1"); err != nil {
				t.Errorf("the other client after KILL_CLIENT: %v", err)
			}
			_, err = boss.Exec(bg, "KILL_CLIENT "+v["ptr"]).ReadAll()
			if err == nil || !strings.Contains(err.Error(), "no client "+v["ptr"]) {
				t.Errorf("KILL_CLIENT of a client gone: %v", err)
			}

			// A console client too.
			other, err := pgconn.Connect(bg, "postgres://boss@"+addr+"/pgbouncer?sslmode=disable&application_name=kill-console")
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close(bg)
			_, clients = consoleRows(t, boss, "SHOW CLIENTS")
			oc := find(clients, "application_name", "kill-console")
			if oc == nil {
				t.Fatalf("no console client in SHOW CLIENTS: %v", clients)
			}
			if _, err := boss.Exec(bg, "KILL_CLIENT "+oc["ptr"]).ReadAll(); err != nil {
				t.Fatalf("KILL_CLIENT of a console client: %v", err)
			}
			if _, err := other.Exec(bg, "SHOW VERSION").ReadAll(); err == nil {
				t.Error("the killed console client still runs commands")
			}
		})
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 10 s", what)
		}
	}
}

// SET changes a setting in place, by PgBouncer's name and units or by
// qprouter's key, until a RELOAD reads the config file again; a setting
// fixed at start, an unknown one and a bad value are refused.
func TestConsoleSet(t *testing.T) {
	c := pgtest.Shared(t)
	bg := context.Background()
	cfgPath := filepath.Join(t.TempDir(), "qprouter.toml")
	write(t, cfgPath, fmt.Sprintf("server_url = %q\npool_mode = \"transaction\"\npool_size = 2\nadmin_users = [\"boss\"]\n", c.URL()))
	addr, reload, stop := startWithHUP(t, "--config", cfgPath)
	defer stop()
	boss, err := pgconn.Connect(bg, "postgres://boss@"+addr+"/pgbouncer?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer boss.Close(bg)
	exec := func(sql string) error { _, err := boss.Exec(bg, sql).ReadAll(); return err }
	config := func(key string) string {
		t.Helper()
		_, rows := consoleRows(t, boss, "SHOW CONFIG")
		if r := find(rows, "key", key); r != nil {
			return r["value"]
		}
		return "(none)"
	}
	for _, q := range []string{"SET default_pool_size = 5", "set query_wait_timeout to '1.5'", "SET client_idle_timeout = 2m", "SET pool_mode = Session"} {
		if err := exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if got := []string{config("pool_size"), config("default_pool_size"), config("acquire_timeout"), config("client_idle_timeout"), config("pool_mode")}; !slices.Equal(got, []string{"5", "5", "1.5s", "2m0s", "session"}) {
		t.Errorf("SHOW CONFIG after SET: pool_size, default_pool_size, acquire_timeout, client_idle_timeout, pool_mode = %v", got)
	}

	// max_client_conn applies to the next logins.
	url := "postgres://postgres@" + addr + "/postgres?sslmode=disable"
	if err := exec("SET max_client_conn = 2"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		cn, err := pgx.Connect(bg, url)
		if err != nil {
			t.Fatal(err)
		}
		defer cn.Close(bg)
	}
	if cn, err := pgx.Connect(bg, url); err == nil || !strings.Contains(err.Error(), "too many clients (max 2)") {
		t.Errorf("a third client with max_client_conn = 2: %v", err)
		if err == nil {
			cn.Close(bg)
		}
	}
	if err := exec("SET max_client_conn = 0"); err != nil {
		t.Fatal(err)
	}
	cn, err := pgx.Connect(bg, url)
	if err != nil {
		t.Fatalf("a third client with max_client_conn = 0: %v", err)
	}
	cn.Close(bg)

	for q, want := range map[string]string{
		"SET listen = '127.0.0.1:1'":     "SET listen: listen changes only at a restart",
		"SET nosuch = 1":                 `SET nosuch: unknown setting "nosuch" (SHOW CONFIG lists them)`,
		"SET default_pool_size = many":   "SET default_pool_size: default_pool_size = many: want a whole number from 1",
		"SET pool_size = 0":              "SET pool_size: --pool-size 0: want at least 1",
		"SET databases = x":              "SET databases: databases is a table: it changes through the config file (then RELOAD)",
		"SET health_check_after = later": "SET health_check_after: health_check_after = later: want a duration (30s, 1m) or seconds",
	} {
		var pe *pgconn.PgError
		if err := exec(q); !errors.As(err, &pe) || pe.Message != want {
			t.Errorf("%s: %v, want %q", q, err, want)
		}
	}
	if got := config("pool_size"); got != "5" {
		t.Errorf("pool_size after refused SETs: %s, want 5", got)
	}
	// RELOAD reads the file again: its values win.
	if err := exec("RELOAD"); err != nil {
		t.Fatal(err)
	}
	if got := []string{config("pool_size"), config("client_idle_timeout")}; !slices.Equal(got, []string{"2", "0s"}) {
		t.Errorf("after RELOAD: pool_size, client_idle_timeout = %v, want the file's 2 and the default 0s", got)
	}
	// A reload leaves the settings fixed at start as they are, and says so.
	write(t, cfgPath, fmt.Sprintf("server_url = %q\npool_mode = \"transaction\"\npool_size = 3\nadmin_users = [\"boss\"]\ncache_unnamed = true\n", c.URL()))
	if logs := reload("msg=reloaded"); !strings.Contains(logs, `changes only at a restart; it stays as it was" key=cache_unnamed`) {
		t.Errorf("no warning for cache_unnamed at a reload:\n%s", logs)
	}
	if got := []string{config("pool_size"), config("cache_unnamed")}; !slices.Equal(got, []string{"3", "false"}) {
		t.Errorf("after a reload changing cache_unnamed: pool_size, cache_unnamed = %v, want 3 and false", got)
	}
}
