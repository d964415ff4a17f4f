package console_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxyserver"
)

// rvServe starts qprouter's server over the shared cluster with the admin
// console (admin "admin", stats user "watcher", trust), as the CLI would.
func rvServe(t *testing.T, mode string, edit func(*proxyserver.Config)) (string, *pgtest.Cluster) {
	t.Helper()
	cl := pgtest.Shared(t)
	c := proxyserver.Config{Listen: "127.0.0.1:0", ServerURL: fmt.Sprintf("postgres://127.0.0.1:%d/postgres?sslmode=disable", cl.Port),
		PoolMode: mode, PoolSize: 2, AcquireTimeout: 30 * time.Second, IdleTimeout: time.Minute, MaxLifetime: time.Hour,
		HealthCheckAfter: 30 * time.Second, ReservePoolTimeout: 5 * time.Second, PreparedPerServer: 64, ShutdownTimeout: 5 * time.Second,
		LogLevel: "error", ResetQuery: "DISCARD ALL", AdminUsers: []string{"admin"}, StatsUsers: []string{"watcher"},
		ConsoleDatabase: "pgbouncer"}
	if edit != nil {
		edit(&c)
	}
	ready := make(chan string, 1)
	s, err := proxyserver.New(proxyserver.Options{Config: c, Ready: func(a string) { ready <- a }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case a := <-ready:
		return a, cl
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("not listening")
	}
	return "", nil
}

func rvConsole(t *testing.T, addr, user string) *pgconn.PgConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pc, err := pgconn.Connect(ctx, "postgres://"+user+"@"+addr+"/pgbouncer?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close(context.Background()) })
	return pc
}

// rvShow runs a console command and returns its rows (NULL as "NULL").
func rvShow(t *testing.T, pc *pgconn.PgConn, q string) []map[string]string {
	t.Helper()
	rows, err := rvTry(pc, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return rows
}

func rvTry(pc *pgconn.PgConn, q string) ([]map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := pc.Exec(ctx, q).ReadAll()
	if err != nil {
		return nil, err
	}
	var out []map[string]string
	for _, r := range res {
		for _, row := range r.Rows {
			m := map[string]string{}
			for i, f := range r.FieldDescriptions {
				if row[i] == nil {
					m[f.Name] = "NULL"
				} else {
					m[f.Name] = string(row[i])
				}
			}
			out = append(out, m)
		}
	}
	return out, nil
}

func rvFind(rows []map[string]string, key, value string) map[string]string {
	for _, r := range rows {
		if r[key] == value {
			return r
		}
	}
	return nil
}

func rvConnect(t *testing.T, addr, db, app string) *pgx.Conn {
	t.Helper()
	cn, err := pgx.Connect(context.Background(), "postgres://postgres@"+addr+"/"+db+"?sslmode=disable&application_name="+app)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cn.Close(context.Background()) })
	return cn
}

// A PAUSE that another console's RESUME overtook must not go on to act
// on the resumed pool: PgBouncer closes a paused pool's server connections
// only while it is paused (janitor.c per_loop_pause runs under
// cf_pause_mode == P_PAUSE); once RESUME ran, its clients keep their
// connections. qprouter's PAUSE keeps polling after the RESUME and, when
// the transaction it waited for ends, calls Disconnect on the running
// pool: its server connection is closed and the next query gets a new
// backend.
func TestConsoleReviewPauseOvertakenByResumeDisconnects(t *testing.T) {
	addr, _ := rvServe(t, "transaction", func(c *proxyserver.Config) { c.PoolSize = 1 })
	ctx := context.Background()
	a := rvConnect(t, addr, "postgres", "zz-pause")
	var pid int
	tx, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow(ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	first := rvConsole(t, addr, "admin")
	paused := make(chan error, 1)
	go func() {
		_, err := first.Exec(ctx, "PAUSE postgres").ReadAll()
		paused <- err
	}()
	second := rvConsole(t, addr, "admin")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if d := rvFind(rvShow(t, second, "SHOW DATABASES"), "name", "postgres"); d != nil && d["paused"] == "1" {
			break // PAUSE is under way, waiting for the transaction
		}
		if time.Now().After(deadline) {
			t.Fatal("PAUSE postgres did not pause the pool")
		}
	}
	time.Sleep(100 * time.Millisecond)
	rvShow(t, second, "RESUME postgres")
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-paused:
	case <-time.After(5 * time.Second):
		t.Fatal("PAUSE did not return once the transaction ended")
	}
	time.Sleep(100 * time.Millisecond)
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for i := range 3 {
		var now int
		if err := a.QueryRow(qctx, "select pg_backend_pid()").Scan(&now); err != nil {
			t.Fatal(err)
		}
		if now != pid {
			t.Fatalf("query %d after RESUME: backend %d, want the pool's one server connection %d kept (the overtaken PAUSE disconnected a resumed pool)", i, now, pid)
		}
	}
	if st := rvFind(rvShow(t, second, "SHOW DATABASES"), "name", "postgres"); st["paused"] != "0" {
		t.Errorf("SHOW DATABASES after RESUME: %v", st)
	}
}

// PAUSE db pauses the pools of db only (docs/qprouter.md: "stop handing
// out server connections, to every pool or to those of db"). The proxy
// holds pools by their name "database/user", which two pools share when a
// name has a '/': (zzq, x/zzu) and (zzq/x, zzu) are both "zzq/x/zzu", so
// PAUSE zzq also stops the clients of database zzq/x. PostgreSQL allows
// '/' in database and role names (and SHOW STATS reports such a name
// whole, so the names are expected).
func TestConsoleReviewPauseSlashNameHoldsOtherDatabase(t *testing.T) {
	addr, cl := rvServe(t, "transaction", nil)
	ctx := context.Background()
	su, err := pgx.Connect(ctx, cl.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(ctx)
	cleanup := func() {
		su.Exec(ctx, `drop database if exists "zzq" with (force)`)
		su.Exec(ctx, `drop database if exists "zzq/x" with (force)`)
		su.Exec(ctx, `drop role if exists "x/zzu"`)
		su.Exec(ctx, `drop role if exists "zzu"`)
	}
	cleanup()
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), cl.URL())
		if err == nil {
			defer c.Close(context.Background())
			for _, q := range []string{`drop database if exists "zzq" with (force)`, `drop database if exists "zzq/x" with (force)`,
				`drop role if exists "x/zzu"`, `drop role if exists "zzu"`} {
				c.Exec(context.Background(), q)
			}
		}
	})
	for _, q := range []string{`create role "x/zzu" login superuser`, `create role "zzu" login superuser`,
		`create database "zzq"`, `create database "zzq/x"`} {
		if _, err := su.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn := func(user, db string) *pgx.Conn {
		c, err := pgx.Connect(ctx, "postgres://"+strings.ReplaceAll(user, "/", "%2F")+"@"+addr+"/"+strings.ReplaceAll(db, "/", "%2F")+"?sslmode=disable")
		if err != nil {
			t.Fatalf("%s@%s: %v", user, db, err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		var got string
		if err := c.QueryRow(ctx, "select current_database()").Scan(&got); err != nil || got != db {
			t.Fatalf("%s@%s: current_database %q %v", user, db, got, err)
		}
		return c
	}
	conn("x/zzu", "zzq")
	other := conn("zzu", "zzq/x")
	con := rvConsole(t, addr, "admin")
	rvShow(t, con, "PAUSE zzq")
	defer rvTry(con, "RESUME")
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var one int
	if err := other.QueryRow(qctx, "select 1").Scan(&one); err != nil {
		t.Fatalf("a client of database zzq/x after PAUSE zzq: %v (held by the pause of another database's pool)", err)
	}
	if d := rvFind(rvShow(t, con, "SHOW DATABASES"), "name", "zzq/x"); d == nil || d["paused"] != "0" {
		t.Errorf("SHOW DATABASES zzq/x after PAUSE zzq: %v", d)
	}
}

// SET auth_hba_file on a qprouter started without one answers SET, and
// SHOW CONFIG calls the key changeable, but nothing changes: the rules
// are not in force (a reject line still admits the client) and SHOW
// CONFIG still shows no file; only a log line says "turned on or off at
// the next start". docs/qprouter.md: keys SET cannot change "are refused
// with an error naming them, and nothing changes". An admin who SETs
// rules to shut a client out is told it worked.
func TestConsoleReviewSetHBAFileAcceptedButIgnored(t *testing.T) {
	addr, _ := rvServe(t, "transaction", nil)
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "hba.conf")
	rules := "host postgres postgres 127.0.0.1/32 reject\nhost all all 127.0.0.1/32 trust\n"
	if err := os.WriteFile(file, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	con := rvConsole(t, addr, "admin")
	_, setErr := rvTry(con, "SET auth_hba_file = '"+file+"'")
	if setErr != nil {
		return // refused, as the docs promise for a key SET cannot change
	}
	cfg := rvFind(rvShow(t, con, "SHOW CONFIG"), "key", "auth_hba_file")
	cn, err := pgconn.Connect(ctx, "postgres://postgres@"+addr+"/postgres?sslmode=disable")
	if err == nil {
		cn.Close(ctx)
		t.Errorf("SET auth_hba_file answered SET, but its reject rule is not in force (the client logged in); SHOW CONFIG: %v", cfg)
	}
}

// SHOW CONFIG hides the server URL's passwords (docs/qprouter.md: "server
// URL passwords hidden"), and any stats user may run it. redact hides
// the user info's password and ?password=, but not ?sslpassword=, the
// passphrase of the client key (sslkey) that pgx decrypts to log in to
// the server: a stats user (a dashboard's account) reads it in clear.
func TestConsoleReviewShowConfigLeaksSSLPassword(t *testing.T) {
	addr, _ := rvServe(t, "transaction", func(c *proxyserver.Config) {
		c.ServerURL += "&sslpassword=hunter2"
	})
	con := rvConsole(t, addr, "watcher")
	row := rvFind(rvShow(t, con, "SHOW CONFIG"), "key", "server_url")
	if row == nil {
		t.Fatal("SHOW CONFIG: no server_url")
	}
	if strings.Contains(row["value"], "hunter2") {
		t.Errorf("SHOW CONFIG to a stats user: server_url = %s (the client key's passphrase in clear)", row["value"])
	}
}
