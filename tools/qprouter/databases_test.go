package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// Databases on servers of their own, as PgBouncer's [databases] entries:
// each name reaches its server and database (a second cluster, a renamed
// database, the first cluster over its Unix socket), a forced user serves
// every client of its database from one pool, a URL's hosts serve its
// new server connections in turn (or in order, the first that answers),
// a cancel request reaches the server that runs the query, and a name no
// entry serves is refused with 3D000 when there is no default server.
// The same from a pgbouncer.ini.
func TestDatabaseTargets(t *testing.T) {
	c1 := pgtest.Shared(t)
	c2 := pgtest.Start(t, pgtest.Options{})
	serverExec(t, c1.URL(), "DROP ROLE IF EXISTS dbt_forced", "CREATE ROLE dbt_forced LOGIN PASSWORD 'forced pw'")
	serverExec(t, c2.URL(), "CREATE DATABASE two_real")
	serverExec(t, c1.URL(), "DROP TABLE IF EXISTS dbt_connects", "CREATE TABLE dbt_connects (pid int)")
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "qprouter.toml")
	write(t, cfgPath, fmt.Sprintf(`[databases]
one = "postgres://127.0.0.1:%[1]d/postgres"
two = "postgres://127.0.0.1:%[2]d/two_real"
forced = "postgres://dbt_forced:forced%%20pw@127.0.0.1:%[1]d/postgres"
sock = "postgres:///postgres?host=%[3]s&port=%[1]d"
both = "postgres://127.0.0.1:%[1]d,127.0.0.1:%[2]d/postgres"
failover = "postgres://%[4]s,127.0.0.1:%[2]d/postgres?load_balance_hosts=disable"
tuned = "postgres://127.0.0.1:%[1]d/postgres?connect_query=INSERT+INTO+dbt_connects+SELECT+pg_backend_pid()&timezone=Asia%%2FTokyo&application_name=tuned_srv"
badq = "postgres://127.0.0.1:%[1]d/postgres?connect_query=SELEC+1"
`, c1.Port, c2.Port, c1.SocketDir(), freeAddr(t)))
	for _, mode := range []string{"session", "transaction"} {
		t.Run(mode, func(t *testing.T) {
			adminAddr := freeAddr(t)
			url, stop := startRouterWith(t, "--config", cfgPath, "--pool-mode", mode, "--admin", adminAddr)
			defer stop()
			at := func(db, user string) string {
				return strings.Replace(strings.Replace(url, "/postgres?", "/"+db+"?", 1), "postgres@", user+"@", 1)
			}
			for _, c := range []struct {
				db, user         string
				wantDB, wantUser string
				port             int // 0: a Unix socket (no server port)
			}{
				{"one", "postgres", "postgres", "postgres", c1.Port},
				{"two", "postgres", "two_real", "postgres", c2.Port},
				{"sock", "postgres", "postgres", "postgres", 0},
				{"forced", "postgres", "postgres", "dbt_forced", c1.Port},
				{"forced", "someone_else", "postgres", "dbt_forced", c1.Port},
			} {
				checkServedBy(t, at(c.db, c.user), c.wantDB, c.wantUser, c.port)
			}
			// Two clients in transactions at once: two server connections,
			// one on each host of "both".
			ports := map[int]bool{}
			for _, cn := range []*pgx.Conn{inTx(t, at("both", "postgres")), inTx(t, at("both", "postgres"))} {
				var p int
				if err := cn.QueryRow(context.Background(), "SELECT inet_server_port()").Scan(&p); err != nil {
					t.Fatal(err)
				}
				ports[p] = true
				defer cn.Close(context.Background())
			}
			if !ports[c1.Port] || !ports[c2.Port] {
				t.Errorf("round robin over two hosts: ports %v, want %d and %d", ports, c1.Port, c2.Port)
			}
			// The first host of "failover" refuses connections: the second
			// serves, and cancel requests go there.
			checkServedBy(t, at("failover", "postgres"), "postgres", "postgres", c2.Port)
			wantCancelled(t, at("failover", "postgres"))
			// connect_query ran on the server connection, which started
			// with the URL's settings; a failing one is logged and ignored.
			var ran bool
			var tz, app string
			queryRow(t, at("tuned", "postgres"), "SELECT pg_backend_pid() IN (SELECT pid FROM dbt_connects), current_setting('TimeZone'), current_setting('application_name')", &ran, &tz, &app)
			if !ran || tz != "Asia/Tokyo" || app != "tuned_srv" {
				t.Errorf("tuned: connect_query ran %v, TimeZone %s, application_name %s", ran, tz, app)
			}
			var one int
			queryRow(t, at("badq", "postgres"), "SELECT 1", &one)
			var pools struct {
				Pools []struct {
					Name string `json:"name"`
				} `json:"pools"`
			}
			getJSON(t, "http://"+adminAddr+"/api/pools", &pools)
			var names []string
			for _, p := range pools.Pools {
				names = append(names, p.Name)
			}
			if got := strings.Join(names, " "); got != "badq/postgres both/postgres failover/postgres forced/dbt_forced one/postgres sock/postgres tuned/postgres two/postgres" {
				t.Errorf("pools: %s", got)
			}
			var dbs struct {
				Databases []struct {
					Name, Server, Database string
					Hosts                  []string
					ForceUser              string `json:"force_user"`
					LoadBalance            string `json:"load_balance_hosts"`
					ConnectQuery           string `json:"connect_query"`
				} `json:"databases"`
			}
			getJSON(t, "http://"+adminAddr+"/api/databases", &dbs)
			var listed []string
			for _, d := range dbs.Databases {
				listed = append(listed, d.Name)
				if strings.Contains(d.Server, "forced") && !strings.Contains(d.Server, "xxxxx") {
					t.Errorf("/api/databases shows a password: %s", d.Server)
				}
				switch {
				case d.Name == "forced" && d.ForceUser != "dbt_forced",
					d.Name == "two" && (d.Database != "two_real" || len(d.Hosts) != 1 || d.Hosts[0] != fmt.Sprintf("127.0.0.1:%d", c2.Port)),
					d.Name == "both" && (len(d.Hosts) != 2 || d.LoadBalance != "round-robin"),
					d.Name == "failover" && d.LoadBalance != "disable",
					d.Name == "tuned" && !strings.HasPrefix(d.ConnectQuery, "INSERT INTO dbt_connects"):
					t.Errorf("/api/databases %s: %+v", d.Name, d)
				}
			}
			if got := strings.Join(listed, " "); got != "badq both failover forced one sock tuned two" {
				t.Errorf("/api/databases lists %s", got)
			}
			wantCancelled(t, at("two", "postgres"))
			_, err := pgx.Connect(context.Background(), at("nosuch", "postgres"))
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "3D000" || !strings.Contains(pe.Message, `no such database: "nosuch"`) {
				t.Errorf("unknown database: %v", err)
			}
		})
	}

	// The auth query runs on the server of the client's database: a role
	// only the second cluster has logs in to "two" and not to "one".
	serverExec(t, c2.URL(), "SET password_encryption = 'scram-sha-256'", "CREATE ROLE dbt_two LOGIN PASSWORD 'two pw'")
	aq, stopAQ := startRouterWith(t, "--config", cfgPath, "--auth-user", "postgres")
	defer stopAQ()
	as := func(db string) string {
		return strings.Replace(strings.Replace(aq, "/postgres?", "/"+db+"?", 1), "postgres@", "dbt_two:two%20pw@", 1)
	}
	checkServedBy(t, as("two"), "two_real", "dbt_two", c2.Port)
	if _, err := pgx.Connect(context.Background(), as("one")); err == nil || !strings.Contains(err.Error(), "28P01") {
		t.Errorf("a role of the second cluster logging in to the first's database: %v", err)
	}
	// A database's own auth user (PgBouncer's per-database auth_user),
	// with no top-level one: its database looks users up, the others
	// do not.
	perDB := filepath.Join(dir, "perdb.toml")
	write(t, perDB, fmt.Sprintf("[databases]\none = \"postgres://127.0.0.1:%d/postgres\"\ntwo = \"postgres://127.0.0.1:%d/two_real?auth_user=postgres\"\n", c1.Port, c2.Port))
	aq2, stopAQ2 := startRouterWith(t, "--config", perDB)
	defer stopAQ2()
	as2 := func(db string) string {
		return strings.Replace(strings.Replace(aq2, "/postgres?", "/"+db+"?", 1), "postgres@", "dbt_two:two%20pw@", 1)
	}
	checkServedBy(t, as2("two"), "two_real", "dbt_two", c2.Port)
	if _, err := pgx.Connect(context.Background(), as2("one")); err == nil || !strings.Contains(err.Error(), "28P01") {
		t.Errorf("a database without an auth user: %v", err)
	}

	// --server-round-robin: a client's back-to-back transactions go round
	// the idle connections, and so round both hosts of "both" (by default
	// the most recently used connection serves them all).
	for _, rr := range []bool{false, true} {
		args := []string{"--config", cfgPath, "--pool-mode", "transaction"}
		if rr {
			args = append(args, "--server-round-robin")
		}
		url, stop := startRouterWith(t, args...)
		both := strings.Replace(url, "/postgres?", "/both?", 1)
		a, b := inTx(t, both), inTx(t, both)
		for _, cn := range []*pgx.Conn{a, b} {
			if _, err := cn.Exec(context.Background(), "COMMIT"); err != nil {
				t.Fatal(err)
			}
			cn.Close(context.Background())
		}
		cn, err := pgx.Connect(context.Background(), both)
		if err != nil {
			t.Fatal(err)
		}
		ports := map[int]int{}
		for range 4 {
			var p int
			if err := cn.QueryRow(context.Background(), "SELECT inet_server_port()").Scan(&p); err != nil {
				t.Fatal(err)
			}
			ports[p]++
		}
		cn.Close(context.Background())
		stop()
		if want := map[bool]int{false: 1, true: 2}[rr]; len(ports) != want {
			t.Errorf("--server-round-robin %v: 4 transactions on ports %v", rr, ports)
		}
	}

	// The same entries in a pgbouncer.ini: one renamed on the second
	// cluster, the rest through *.
	ini := filepath.Join(dir, "pgbouncer.ini")
	write(t, ini, fmt.Sprintf("[databases]\nalias = host=127.0.0.1 port=%d dbname=two_real\n* = host=127.0.0.1 port=%d\n"+
		"[pgbouncer]\nauth_type = trust\npool_mode = transaction\n", c2.Port, c1.Port))
	url, stop := startRouterWith(t, "--pgbouncer-ini", ini)
	defer stop()
	checkServedBy(t, strings.Replace(url, "/postgres?", "/alias?", 1), "two_real", "postgres", c2.Port)
	checkServedBy(t, url, "postgres", "postgres", c1.Port)
}

// queryRow runs sql at url and scans its row into dst; false (and the
// test failed) when it could not.
func queryRow(t *testing.T, url, sql string, dst ...any) bool {
	t.Helper()
	ctx := context.Background()
	cn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Errorf("%s: %v", url, err)
		return false
	}
	defer cn.Close(ctx)
	if err := cn.QueryRow(ctx, sql).Scan(dst...); err != nil {
		t.Errorf("%s: %s: %v", url, sql, err)
		return false
	}
	return true
}

// inTx connects to url and opens a transaction, which holds a server
// connection in either pool mode.
func inTx(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	cn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cn.Exec(context.Background(), "BEGIN"); err != nil {
		t.Fatal(err)
	}
	return cn
}

// checkServedBy connects to url and checks the server session's database,
// user and server port (0: a Unix socket).
func checkServedBy(t *testing.T, url, wantDB, wantUser string, port int) {
	t.Helper()
	var db, user string
	var p *int
	if !queryRow(t, url, "SELECT current_database(), current_user, inet_server_port()", &db, &user, &p) {
		return
	}
	got := 0
	if p != nil {
		got = *p
	}
	if db != wantDB || user != wantUser || got != port {
		t.Errorf("%s: served by database %s as %s on port %d, want %s as %s on %d", url, db, user, got, wantDB, wantUser, port)
	}
}

// wantCancelled runs a long sleep at url and cancels it: the cancel must
// reach the server that runs it.
func wantCancelled(t *testing.T, url string) {
	t.Helper()
	ctx := context.Background()
	cn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close(ctx)
	go func() {
		time.Sleep(300 * time.Millisecond)
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		cn.PgConn().CancelRequest(cctx)
	}()
	qctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, err = cn.Exec(qctx, "SELECT pg_sleep(30)")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Errorf("cancelled sleep: %v", err)
	}
}
