// Review of today's changes (reroute by generation, portal runs, session
// texts, PAUSE overtaken by RESUME).

package proxyserver

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// A reload that changes [databases] (here: one entry added) bumps the
// router's generation, and every transaction-mode client then "reroutes"
// at its next transaction: session.reroute Joins the pool Route gives
// (the same pool, for a client whose route did not change) before it
// Leaves the old one. A pool at max_pool_clients refuses that Join, so a
// connected client whose database the reload did not touch is ended with
// "too many clients" at its next statement. Before the change it went on.
func TestToday3ReviewRerouteSamePoolAtMaxPoolClients(t *testing.T) {
	cl := pgtest.Shared(t)
	c := valid()
	c.ServerURL = ""
	c.PoolMode = "transaction"
	c.MaxPoolClients = 1
	c.AcquireTimeout = 10 * time.Second
	c.IdleTimeout = time.Minute
	c.MaxLifetime = time.Hour
	c.ShutdownTimeout = 5 * time.Second
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", cl.Port)
	c.Databases = map[string]string{"app": url}
	next := c
	next.Databases = map[string]string{"app": url, "other": url}
	s, addr := serveForTest(t, Options{Config: c, Load: func() (Config, error) { return next, nil }})
	ctx := context.Background()
	cn := pgxConnect(t, "postgres://whoever@"+addr+"/app?sslmode=disable")
	if _, err := cn.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if err := s.reload(); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if _, err := cn.Exec(ctx, "SELECT 2"); err != nil {
		t.Errorf("a reload added database \"other\"; the connected client of \"app\" (same pool app/postgres, at its max_pool_clients 1) fails its next statement: %v", err)
	}
}

// A portal read in parts inside a transaction that the client ends with a
// simple-Query COMMIT (tokio-postgres' Transaction::commit, psql): the
// ReadyForQuery 'I' answering that Query already carries the COMMIT's
// event (relay.go 'Z': ev != nil), so the suspended portal's run is
// neither emitted nor cleared. The statement never reaches the digests
// (pg_stat_statements counts it: 1 call, the 2 rows sent), and s.runs
// keeps the entry for the rest of the session (one per portal name).
func TestToday3ReviewSuspendedPortalEndedBySimpleCommit(t *testing.T) {
	s, addr, _ := rvAdminServe(t, nil, nil)
	ctx := context.Background()
	pc := pgconnConnect(t, "postgres://postgres@"+addr+"/postgres?sslmode=disable")
	if _, err := pc.Exec(ctx, "BEGIN").ReadAll(); err != nil {
		t.Fatal(err)
	}
	got, suspended := rvT3Ext(t, pc, &pgproto3.Parse{Query: "SELECT g AS zzt3_commit_portal FROM generate_series(1, 5) g"},
		&pgproto3.Bind{DestinationPortal: "p1"}, &pgproto3.Execute{Portal: "p1", MaxRows: 2})
	if got != 2 || !suspended {
		t.Fatalf("setup: %d rows, suspended %v", got, suspended)
	}
	if _, err := pc.Exec(ctx, "COMMIT").ReadAll(); err != nil {
		t.Fatal(err)
	}
	d := rvAdminDigests(t, s, "zzt3_commit_portal")
	if d == nil || d.Calls != 1 || d.Rows != 2 {
		_, body := rvAdminDo(s, http.MethodGet, "/api/stats/digests")
		t.Errorf("a portal that sent 2 rows and was closed by COMMIT is 1 call of 2 rows in pg_stat_statements, but its digest is %+v:\n%s", d, body)
	}
}

// Session mode keeps named statements' texts (noteText) for the digests,
// and forgets one only at a Close message. A statement dropped with SQL
// DEALLOCATE (psycopg 3 evicts its prepared statements so; DISCARD ALL,
// DEALLOCATE ALL alike) keeps its text, and a statement of the same name
// made again with SQL PREPARE is then counted under the old, unrelated
// text: every Execute of s1 here lands in the digest of
// "SELECT 1 AS zzt3_old", which never runs again.
func TestToday3ReviewSessionTextStaleAfterDeallocate(t *testing.T) {
	s, addr, _ := rvAdminServe(t, nil, nil)
	ctx := context.Background()
	pc := pgconnConnect(t, "postgres://postgres@"+addr+"/postgres?sslmode=disable")
	if _, err := pc.Prepare(ctx, "s1", "SELECT 1 AS zzt3_old", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Exec(ctx, "DEALLOCATE s1; PREPARE s1 AS SELECT 2 AS zzt3_new").ReadAll(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		res := pc.ExecPrepared(ctx, "s1", nil, nil, nil).Read()
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		if len(res.Rows) != 1 || string(res.Rows[0][0]) != "2" {
			t.Fatalf("setup: s1 gave %q", res.Rows)
		}
	}
	if d := rvAdminDigests(t, s, "zzt3_old"); d != nil {
		t.Errorf("SELECT 1 AS zzt3_old was deallocated before it ever ran, but its digest counts %d calls: the 3 Executes of the new s1 (SELECT 2 AS zzt3_new)", d.Calls)
	}
}

// PAUSE db "answer[s] once the paused pools' server connections are all
// back" (docs/qprouter.md). waitPaused now returns at once, as if a RESUME
// had come, when any pool of the database is not paused: a pool of the
// database made during the wait (a client of another user connecting) is
// one, so PAUSE answers while the paused pool's transaction still runs,
// and the operator restarts the database under it.
func TestToday3ReviewPauseReturnsWhileServerBusy(t *testing.T) {
	cl := pgtest.Shared(t)
	ctx := context.Background()
	admin := pgxConnect(t, cl.URL())
	admin.Exec(ctx, "drop database if exists zzt3pause with (force)")
	if _, err := admin.Exec(ctx, "create database zzt3pause"); err != nil {
		t.Fatal(err)
	}
	admin.Exec(ctx, "create role zzt3user login")
	t.Cleanup(func() { admin.Exec(context.Background(), "drop database if exists zzt3pause with (force)") })
	_, addr, _ := rvServe(t, "transaction", nil)
	busy := pgxConnect(t, "postgres://postgres@"+addr+"/zzt3pause?sslmode=disable")
	tx, err := busy.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	con := opsConsole(t, addr)
	done := make(chan error, 1)
	go func() {
		_, err := con.Exec(context.Background(), "PAUSE zzt3pause").ReadAll()
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("setup: PAUSE answered (%v) while a transaction holds a server", err)
	case <-time.After(500 * time.Millisecond):
	}
	pgxConnect(t, "postgres://zzt3user@"+addr+"/zzt3pause?sslmode=disable")
	answered := false
	select {
	case err := <-done:
		answered = true
		t.Errorf("PAUSE zzt3pause answered (err %v) while the paused pool zzt3pause/postgres still has a transaction open on its server (another user's client had just connected)", err)
	case <-time.After(time.Second):
	}
	tx.Commit(ctx)
	if !answered {
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("PAUSE did not answer after the transaction ended")
		}
	}
	con.Exec(context.Background(), "RESUME zzt3pause").ReadAll()
}

// rvT3Ext sends msgs then Sync and reads to ReadyForQuery, failing on an
// ErrorResponse; it returns the DataRows and PortalSuspended seen.
func rvT3Ext(t *testing.T, pc *pgconn.PgConn, msgs ...pgproto3.FrontendMessage) (rows int, suspended bool) {
	t.Helper()
	a := extRun(t, pc, msgs...)
	if a.code != "" {
		t.Fatalf("error %s", a.code)
	}
	return a.rows, a.suspended
}

// JDBC's Statement.setMaxRows (or any Execute with a row limit that the
// client does not resume) inside a transaction: the same query runs twice,
// each time in a new unnamed portal that is suspended after 2 rows and
// then dropped by the next Bind. PostgreSQL runs two statements
// (pg_stat_statements: 2 calls, 4 rows). session.suspended keys the runs by
// portal name and adds to the run when the text is the same, so the second
// portal is taken for the continuation of the first: 1 call, 4 rows.
func TestToday3ReviewRebuiltPortalMergedIntoOldRun(t *testing.T) {
	s, addr, _ := rvAdminServe(t, nil, nil)
	pc := pgconnConnect(t, "postgres://postgres@"+addr+"/postgres?sslmode=disable")
	rvT3Ext(t, pc, &pgproto3.Parse{Query: "BEGIN"}, &pgproto3.Bind{}, &pgproto3.Execute{})
	const q = "SELECT g AS zzt3_maxrows FROM generate_series(1, 5) g"
	for i := range 2 {
		rows, suspended := rvT3Ext(t, pc, &pgproto3.Parse{Query: q}, &pgproto3.Bind{}, &pgproto3.Execute{MaxRows: 2})
		if rows != 2 || !suspended {
			t.Fatalf("setup: run %d: %d rows, suspended %v", i, rows, suspended)
		}
	}
	// COMMIT in a portal of its own, so that nothing else touches the
	// unnamed portal's run (see the next test).
	rvT3Ext(t, pc, &pgproto3.Parse{Query: "COMMIT"}, &pgproto3.Bind{DestinationPortal: "c"}, &pgproto3.Execute{Portal: "c"})
	d := rvAdminDigests(t, s, "zzt3_maxrows")
	if d == nil || d.Calls != 2 || d.Rows != 4 {
		t.Errorf("two portals of the query each sent 2 rows (pg_stat_statements: 2 calls, 4 rows), but the digest is %+v", d)
	}
}

// The same root: a suspended unnamed portal followed, in its transaction,
// by any other statement through the unnamed portal (the usual case: the
// next query of the application) loses its run without an event
// (session.resumed drops a run whose text differs), so a query read with
// a row limit is never counted at all. pg_stat_statements: 1 call, 2 rows.
func TestToday3ReviewSuspendedPortalLostByNextStatement(t *testing.T) {
	s, addr, _ := rvAdminServe(t, nil, nil)
	pc := pgconnConnect(t, "postgres://postgres@"+addr+"/postgres?sslmode=disable")
	rvT3Ext(t, pc, &pgproto3.Parse{Query: "BEGIN"}, &pgproto3.Bind{}, &pgproto3.Execute{})
	rows, suspended := rvT3Ext(t, pc, &pgproto3.Parse{Query: "SELECT g AS zzt3_lost FROM generate_series(1, 5) g"},
		&pgproto3.Bind{}, &pgproto3.Execute{MaxRows: 2})
	if rows != 2 || !suspended {
		t.Fatalf("setup: %d rows, suspended %v", rows, suspended)
	}
	rvT3Ext(t, pc, &pgproto3.Parse{Query: "SELECT 1 AS zzt3_next"}, &pgproto3.Bind{}, &pgproto3.Execute{})
	rvT3Ext(t, pc, &pgproto3.Parse{Query: "COMMIT"}, &pgproto3.Bind{}, &pgproto3.Execute{})
	if rvAdminDigests(t, s, "zzt3_next") == nil {
		t.Fatal("setup: no digest of the next statement")
	}
	d := rvAdminDigests(t, s, "zzt3_lost")
	if d == nil || d.Calls != 1 || d.Rows != 2 {
		t.Errorf("a portal suspended after 2 rows, then replaced by the next query: pg_stat_statements counts 1 call, 2 rows; the digest is %+v", d)
	}
}
