package console_test

// Second review of the admin console, differential against PgBouncer 1.18
// (Debian's /usr/sbin/pgbouncer, src/admin.c at tag pgbouncer_1_18_0).
// The helpers rvServe, rvConsole, rvTry, rvShow, rvFind and rvConnect are
// review_console_test.go's.

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/qpkit/qpkit/pkg/proxyserver"
)

// PgBouncer's console answers the SET and SHOW of the session settings
// that client libraries touch on their own (admin.c fake_param_list:
// client_encoding, default_transaction_isolation,
// standard_conforming_strings, datestyle, timezone), for every console
// user: SET with NOTICE "SET ignored" and CommandComplete SET, SHOW with
// one row. libpq's PQsetClientEncoding sends exactly "set client_encoding
// to '...'" (psql's \encoding, PHP's pg_set_client_encoding, dblink from
// a database whose encoding is not UTF8, as pgbouncer_fdw does), and old
// psycopg2 ran SHOW default_transaction_isolation at connect. qprouter
// answers the SET with "SET client_encoding: unknown setting" (or "admin
// access needed" to a stats user) and the SHOW with "invalid command".
func TestConsole2ReviewSessionSettingsAnsweredAsPgBouncer(t *testing.T) {
	addr, _ := rvServe(t, "transaction", nil)
	for _, user := range []string{"admin", "watcher"} {
		con := rvConsole(t, addr, user)
		for _, q := range []string{"set client_encoding to 'UTF8'", "SET DateStyle = ISO"} {
			if _, err := rvTry(con, q); err != nil {
				t.Errorf("%s: %s: %v (PgBouncer 1.18: NOTICE \"SET ignored\", then SET)", user, q, err)
			}
		}
		for _, q := range []string{"SHOW client_encoding", "show default_transaction_isolation", "SHOW standard_conforming_strings"} {
			rows, err := rvTry(con, q)
			if err != nil || len(rows) != 1 {
				t.Errorf("%s: %s: %v %v (PgBouncer 1.18: one row, e.g. client_encoding UTF-8, read committed, on)", user, q, rows, err)
			}
		}
		// PgBouncer 1.18's values, and its SELECT x for SHOW x.
		if rows, err := rvTry(con, "select TimeZone"); err != nil || len(rows) != 1 || rows[0]["timezone"] != "GMT" {
			t.Errorf("%s: select TimeZone: %v %v (PgBouncer 1.18: timezone GMT)", user, rows, err)
		}
		if rows, err := rvTry(con, "SELECT VERSION"); err != nil || len(rows) != 1 {
			t.Errorf("%s: SELECT VERSION: %v %v (PgBouncer 1.18: SHOW VERSION's row)", user, rows, err)
		}
		if _, err := rvTry(con, "SELECT 1"); err == nil || !strings.Contains(err.Error(), "invalid command") {
			t.Errorf("%s: SELECT 1: %v (PgBouncer 1.18: invalid command)", user, err)
		}
	}
}

// PgBouncer never sends NULL in SHOW CLIENTS' connect_time or
// request_time: both are 'T' columns, always formatted ("2026-12-06
// 06:01:02 UTC"; request_time is the client's last request, its login at
// first). Datadog's pgbouncer check (collect_per_client_metrics)
// parses both of every row with re.findall(r'^[^ ]+ [^ ]+', value)[0]
// and time.strptime: a NULL raises TypeError out of the check, which then
// reports nothing. qprouter sends request_time NULL for every client.
func TestConsole2ReviewShowClientsRequestTimeNull(t *testing.T) {
	addr, _ := rvServe(t, "transaction", nil)
	app := rvConnect(t, addr, "postgres", "rvc2-app")
	if _, err := app.Exec(context.Background(), "select 1"); err != nil {
		t.Fatal(err)
	}
	con := rvConsole(t, addr, "watcher")
	stamp := regexp.MustCompile(`^[^ ]+ [^ ]+`)
	rows := rvShow(t, con, "SHOW CLIENTS")
	if rvFind(rows, "application_name", "rvc2-app") == nil {
		t.Fatalf("SHOW CLIENTS: no rvc2-app client: %v", rows)
	}
	for _, r := range rows {
		for _, col := range []string{"connect_time", "request_time"} {
			m := stamp.FindString(r[col])
			if r[col] == "NULL" || m == "" {
				t.Errorf("SHOW CLIENTS %s of %s/%s (%s): %q; PgBouncer always sends a timestamp", col, r["user"], r["database"], r["application_name"], r[col])
				continue
			}
			if _, err := time.Parse("2006-01-02 15:04:05", m); err != nil {
				t.Errorf("SHOW CLIENTS %s: %q: %v", col, r[col], err)
			}
		}
	}

	// A pool client's request_time is its last message, not its login.
	time.Sleep(1100 * time.Millisecond) // the column has whole seconds
	if _, err := app.Exec(context.Background(), "select 2"); err != nil {
		t.Fatal(err)
	}
	r := rvFind(rvShow(t, con, "SHOW CLIENTS"), "application_name", "rvc2-app")
	if r == nil || r["request_time"] <= r["connect_time"] {
		t.Errorf("SHOW CLIENTS of rvc2-app after a query 1.1 s past its login: %v; want request_time after connect_time", r)
	}
}

// An admin who presses ^C in psql while PAUSE waits (for a long
// transaction, say) sends a CancelRequest with the console connection's
// key. PgBouncer 1.18 handles it itself (objects.c accept_cancel_request:
// "cancel request for console client" -> admin.c admin_handle_cancel ->
// full_resume): the pooler is resumed at once, so an operator can back
// out of a PAUSE that takes too long. qprouter drops the request (the
// console's keys are not the proxy's: "cancel request with an unknown
// key"): every pool stays paused, the PAUSE keeps waiting, and every
// client's next query is held until someone finds another console and
// types RESUME.
func TestConsole2ReviewCancelDoesNotAbortPause(t *testing.T) {
	addr, _ := rvServe(t, "transaction", nil)
	ctx := context.Background()
	a := rvConnect(t, addr, "postgres", "rvc2-tx")
	b := rvConnect(t, addr, "postgres", "rvc2-other")
	tx, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	con := rvConsole(t, addr, "admin")
	other := rvConsole(t, addr, "admin")
	paused := make(chan error, 1)
	go func() {
		_, err := con.Exec(ctx, "PAUSE").ReadAll()
		paused <- err
	}()
	defer func() { // let the PAUSE end before the connections close
		rvTry(other, "RESUME")
		tx.Rollback(ctx)
		select {
		case <-paused:
		case <-time.After(5 * time.Second):
			t.Error("PAUSE still waiting after RESUME and the transaction's end")
		}
	}()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if st := rvFind(rvShow(t, other, "SHOW STATE"), "key", "paused"); st != nil && st["value"] == "yes" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("PAUSE did not pause")
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := con.CancelRequest(cctx); err != nil { // psql's ^C
		t.Fatal(err)
	}
	qctx, qcancel := context.WithTimeout(ctx, 3*time.Second)
	defer qcancel()
	var one int
	if err := b.QueryRow(qctx, "select 1").Scan(&one); err != nil {
		st := rvShow(t, other, "SHOW STATE")
		t.Errorf("a client's query 3 s after the admin cancelled the waiting PAUSE: %v; SHOW STATE %v (PgBouncer 1.18 resumes the pooler on a console cancel)", err, st)
	}
	// The cancelled PAUSE ends with 57014 (query_canceled), the console
	// still usable.
	select {
	case err := <-paused:
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "57014" {
			t.Errorf("the cancelled PAUSE ended with %v, want ERROR 57014", err)
		}
		paused <- err // for the deferred check
	case <-time.After(3 * time.Second):
		t.Error("the PAUSE still waits 3 s after its cancel")
	}
	if _, err := rvTry(con, "SHOW VERSION"); err != nil {
		t.Errorf("the console after its PAUSE was cancelled: %v", err)
	}
}

// SHOW LISTS' used_servers is, in PgBouncer, every server connection it
// has open (slab_active_count(server_cache): active, idle, used, tested
// or logging in), and free_servers the free slots of that cache. Against
// PgBouncer 1.18 with one idle server connection (SHOW POOLS sv_idle 1):
// used_servers 1, free_servers 49. qprouter reports used_servers 0 and
// free_servers 1 (it counts only the connections clients hold as used,
// and the idle ones as free), so pgbouncer_exporter's
// pgbouncer_used_servers, the usual "server connections open" gauge, reads
// 0 whenever the pool is idle.
func TestConsole2ReviewListsUsedServersOmitIdle(t *testing.T) {
	addr, _ := rvServe(t, "transaction", nil)
	app := rvConnect(t, addr, "postgres", "rvc2-lists")
	if _, err := app.Exec(context.Background(), "select 1"); err != nil {
		t.Fatal(err)
	}
	con := rvConsole(t, addr, "watcher")
	servers := rvShow(t, con, "SHOW SERVERS")
	if len(servers) == 0 {
		t.Fatal("SHOW SERVERS: no server connection after a query")
	}
	lists := rvShow(t, con, "SHOW LISTS")
	used := rvFind(lists, "list", "used_servers")
	if used == nil || used["items"] != strconv.Itoa(len(servers)) {
		t.Errorf("SHOW LISTS used_servers %v with %d server connections open (SHOW SERVERS %v); PgBouncer counts every open one; lists %v",
			used, len(servers), servers, lists)
	}
}

// PgBouncer refuses to act on its own console database: "cannot disable
// admin db: pgbouncer" (DISABLE and ENABLE), "cannot reconnect admin db",
// "cannot wait in admin db" (admin.c). qprouter answers DISABLE, ENABLE,
// RECONNECT and WAIT_CLOSE of the console database with success and does
// nothing (SHOW DATABASES still shows the console's row disabled 0): an
// admin who disables "pgbouncer" to keep scripts out is told it worked.
func TestConsole2ReviewConsoleDatabaseCommandsClaimSuccess(t *testing.T) {
	addr, _ := rvServe(t, "transaction", nil)
	con := rvConsole(t, addr, "admin")
	for _, q := range []string{"DISABLE pgbouncer", "ENABLE pgbouncer", "RECONNECT pgbouncer", "WAIT_CLOSE pgbouncer"} {
		if _, err := rvTry(con, q); err == nil {
			d := rvFind(rvShow(t, con, "SHOW DATABASES"), "name", "pgbouncer")
			t.Errorf("%s: answered success (SHOW DATABASES pgbouncer: %v); PgBouncer 1.18: ERROR cannot ... admin db: pgbouncer", q, d)
		}
	}
}

// With auth_type any (no passwords), PgBouncer 1.18 makes admins of the
// users in admin_users only: admin.c admin_pre_login sets admin_user for
// them, and admin_post_login lets every other user in without it, so
// they may SHOW but get "admin access needed" for PAUSE, SHUTDOWN, SET...
// Checked against /usr/sbin/pgbouncer 1.18.0 with auth_type = any,
// admin_users = admin: user "nobody" runs SHOW VERSION, and PAUSE and
// RESUME answer "ERROR: admin access needed". (PgBouncer's config.md
// sentence "any user is allowed in as admin" is not what it does.)
// qprouter makes every user an admin: anyone who reaches the port, with
// no password, may SHUTDOWN the proxy, KILL databases or SET server_url.
func TestConsole2ReviewAuthAnyMakesEveryUserAdmin(t *testing.T) {
	addr, _ := rvServe(t, "transaction", func(c *proxyserver.Config) {
		c.AuthType = "any"
		c.Databases = map[string]string{"app": strings.Replace(c.ServerURL, "postgres://", "postgres://postgres@", 1)}
		c.ServerURL = ""
	})
	con := rvConsole(t, addr, "nobody")
	if _, err := rvTry(con, "SHOW VERSION"); err != nil {
		t.Fatalf("SHOW VERSION as a user in neither list (PgBouncer lets them SHOW): %v", err)
	}
	admin := rvConsole(t, addr, "admin")
	for _, q := range []string{"PAUSE", "RECONNECT", "SET default_pool_size = 3"} {
		_, err := rvTry(con, q)
		rvTry(admin, "RESUME")
		if err == nil || !strings.Contains(err.Error(), "admin access needed") {
			t.Errorf("%s as user nobody (not in admin_users) with auth_type any: %v; PgBouncer 1.18: ERROR admin access needed", q, err)
		}
	}
}
