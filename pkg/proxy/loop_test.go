package proxy_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/pgwire"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// TestEventLoopServes runs plain transactions through a proxy with an
// event loop and requires the loop, not the goroutines, to have relayed
// nearly all of them, with the same answers as PostgreSQL gives.
func TestEventLoopServes(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 4, loop: true})
	ctx := context.Background()
	conn := connect(t, r.url("postgres"))
	const n = 300
	for i := range n {
		var got int
		mode := []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec, pgx.QueryExecModeCacheDescribe}[i%3]
		if err := conn.QueryRow(ctx, "select $1::int + 1", mode, i).Scan(&got); err != nil || got != i+1 {
			t.Fatalf("query %d (%v): %d, %v", i, mode, got, err)
		}
	}
	// Rows larger than the loop's buffers in total, in two statements.
	var count, sum int64
	if err := conn.QueryRow(ctx, "select count(*), sum(length(repeat('x', g % 100))) from (select g from generate_series(1, 200000) g) s").Scan(&count, &sum); err != nil || count != 200000 {
		t.Fatalf("aggregate: %d %v", count, err)
	}
	rows, err := conn.Query(ctx, "select g, repeat('y', 50) from generate_series(1, 50000) g")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for rows.Next() {
		var g int
		var y string
		if err := rows.Scan(&g, &y); err != nil || g != seen+1 || len(y) != 50 {
			t.Fatalf("row %d: %d %q %v", seen, g, y, err)
		}
		seen++
	}
	if rows.Err() != nil || seen != 50000 {
		t.Fatalf("rows: %d, %v", seen, rows.Err())
	}
	if got := r.LoopTransactions(); got < n {
		t.Fatalf("the loop relayed %d of %d answers", got, n+2)
	}
	// A transaction block and an error go back and forth between the loop
	// and the goroutine and stay correct.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "create temp table if not exists t_loop (x int) on commit drop"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "select 1/0"); err == nil || !strings.Contains(err.Error(), "22012") {
		t.Fatalf("division by zero: %v", err)
	}
	var one int
	if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after the error: %d %v", one, err)
	}
}

// TestEventLoopPgbench runs pgbench's select-only and TPC-B scripts in
// every protocol through the loop, more clients than servers, with no
// failed transaction, and requires the loop to have relayed most answers.
func TestEventLoopPgbench(t *testing.T) {
	c := pgtest.Shared(t)
	benchDB(t, c)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 4, loop: true, timeout: 30 * time.Second})
	before := r.LoopTransactions()
	total := 0
	for _, m := range []string{"simple", "extended", "prepared"} {
		for _, script := range [][]string{{"-S"}, {"-b", "tpcb-like"}} {
			args := append([]string{"-n", "-M", m, "-c", "12", "-j", "2", "-T", "1"}, script...)
			out := pgbench(t, r.url("bench"), args...)
			n, _ := strconv.Atoi(string(txRe.FindStringSubmatch(out)[1]))
			total += n
		}
	}
	got := r.LoopTransactions() - before
	t.Logf("the loop relayed %d answers for %d pgbench transactions", got, total)
	if got < int64(total)/2 {
		t.Fatalf("the loop relayed %d answers for %d pgbench transactions", got, total)
	}
}

// TestEventLoopAccept: clients accepted, authenticated with md5 and
// welcomed on the loop, one transaction per connection (pgbench -C), a
// wrong password refused, SSLRequest declined, a cancel request, and
// what the loop leaves to Accept (a user only Credentials knows).
func TestEventLoopAccept(t *testing.T) {
	c := pgtest.Shared(t)
	benchDB(t, c)
	users := map[string]pgwire.Credential{"postgres": {Method: pgwire.AuthMD5, Password: "secret"}}
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 4, loop: true, timeout: 30 * time.Second, users: users})
	url := func(password, db string, opts string) string {
		return fmt.Sprintf("postgres://postgres:%s@%s/%s?%s", password, r.addr, db, opts)
	}
	w0, e0 := r.LoopSessions()
	out := pgbench(t, url("secret", "bench", "sslmode=prefer"), "-n", "-S", "-C", "-c", "4", "-j", "2", "-T", "1")
	n, _ := strconv.Atoi(txRe.FindStringSubmatch(out)[1])
	w, e := r.LoopSessions()
	t.Logf("%d transactions, %d sessions welcomed and %d ended on the loop", n, w-w0, e-e0)
	if w-w0 < int64(n)/2 || e-e0 < int64(n)/2 {
		t.Fatalf("%d one-transaction connections: %d welcomed and %d ended on the loop", n, w-w0, e-e0)
	}

	ctx := context.Background()
	if _, err := pgx.Connect(ctx, url("wrong", "postgres", "sslmode=disable")); err == nil || !strings.Contains(err.Error(), "28P01") {
		t.Fatalf("wrong password: %v", err)
	}
	conn := connect(t, url("secret", "postgres", "sslmode=prefer"))
	var one int
	if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("select 1: %d %v", one, err)
	}
	// A CancelRequest reaches the loop's listener like any connection.
	cancelSleep(t, conn)
	if err := conn.QueryRow(ctx, "select 2").Scan(&one); err != nil || one != 2 {
		t.Fatalf("after the cancel: %d %v", one, err)
	}

	// SCRAM on the loop too.
	scram := map[string]pgwire.Credential{"postgres": {Method: pgwire.AuthSCRAM, Password: "secret"}}
	r2 := startProxy(t, c, cfg{mode: proxy.Transaction, size: 2, loop: true, users: scram})
	w0, e0 = r2.LoopSessions()
	out = pgbench(t, fmt.Sprintf("postgres://postgres:secret@%s/bench?sslmode=prefer", r2.addr), "-n", "-S", "-C", "-c", "2", "-j", "2", "-t", "20")
	// The first ones find no idle server and are welcomed by goroutines.
	if w, e := r2.LoopSessions(); w-w0 < 30 || e-e0 < 30 {
		t.Fatalf("SCRAM, 40 one-transaction connections: %d welcomed and %d ended on the loop", w-w0, e-e0)
	}

	// A user the auth file does not have goes to Accept on a goroutine
	// (the auth query's way), replayed from its startup packet; the
	// session then parks on the loop as a goroutine's does.
	r3 := startProxy(t, c, cfg{mode: proxy.Transaction, size: 2, loop: true, users: map[string]pgwire.Credential{}, lookedUp: scram})
	conn3 := connect(t, fmt.Sprintf("postgres://postgres:secret@%s/postgres?sslmode=prefer", r3.addr))
	for i := range 20 {
		if err := conn3.QueryRow(ctx, "select $1::int", i).Scan(&one); err != nil || one != i {
			t.Fatalf("looked-up user, query %d: %d %v", i, one, err)
		}
	}
	if w, _ := r3.LoopSessions(); w != 0 || r3.LoopTransactions() < 20 {
		t.Fatalf("looked-up user: %d sessions welcomed on the loop (want 0), %d answers relayed there (want 20 or more)", w, r3.LoopTransactions())
	}
}

// TestEventLoopStartupTimeout: a client that sends nothing, or half a
// startup packet, or stops after the md5 challenge, is closed by the loop
// after the startup timeout, and the proxy still serves others.
func TestEventLoopStartupTimeout(t *testing.T) {
	c := pgtest.Shared(t)
	users := map[string]pgwire.Credential{"postgres": {Method: pgwire.AuthMD5, Password: "secret"}}
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 2, loop: true, users: users, startup: 300 * time.Millisecond})
	startup := []byte{0, 0, 0, 23, 0, 3, 0, 0, 'u', 's', 'e', 'r', 0, 'p', 'o', 's', 't', 'g', 'r', 'e', 's', 0, 0}
	for name, send := range map[string][]byte{"nothing": nil, "half a packet": {0, 0, 0}, "no password": startup} {
		conn, err := net.Dial("tcp", r.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.Write(send)
		start := time.Now()
		conn.SetReadDeadline(start.Add(10 * time.Second))
		_, err = io.ReadAll(conn) // the md5 challenge, then the end
		if err != nil || time.Since(start) < 250*time.Millisecond || time.Since(start) > 5*time.Second {
			t.Errorf("%s: closed after %v, %v; want about 300 ms", name, time.Since(start), err)
		}
	}
	conn := connect(t, fmt.Sprintf("postgres://postgres:secret@%s/postgres?sslmode=disable", r.addr))
	var one int
	if err := conn.QueryRow(context.Background(), "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("select 1: %d %v", one, err)
	}
}

// TestLoopPerPoolMode: with transaction mode as the default, the loop
// accepts every client, welcomes and serves the transaction-mode ones
// itself, and gives a client whose pool is in session mode (ModeFor) a
// goroutine right after its startup: that client keeps one server for
// its session and none of its answers is relayed on the loop. pgbench
// against a session-mode database, a connection per transaction and
// prepared statements, runs without errors on that path.
func TestLoopPerPoolMode(t *testing.T) {
	c := pgtest.Shared(t)
	benchDB(t, c)
	modeFor := func(db, user string) proxy.Mode {
		if db == "template1" || db == "bench" {
			return proxy.Session
		}
		return proxy.Transaction
	}
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 2, loop: true, timeout: 30 * time.Second, modeFor: modeFor})
	ctx := context.Background()
	pid := func(conn *pgx.Conn) int {
		t.Helper()
		var p int
		if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&p); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// A server left idle in each pool by an earlier client, so that the
	// loop could welcome the next client at once.
	for _, db := range []string{"template1", "postgres"} {
		conn := connect(t, r.url(db))
		pid(conn)
		conn.Close(ctx)
	}
	time.Sleep(100 * time.Millisecond) // the session-mode server's reset

	w0, _ := r.LoopSessions()
	l0 := r.LoopTransactions()
	sess := connect(t, r.url("template1"))
	first := pid(sess)
	for range 5 {
		if p := pid(sess); p != first {
			t.Fatalf("session-mode client moved from backend %d to %d", first, p)
		}
	}
	if w, _ := r.LoopSessions(); w != w0 || r.LoopTransactions() != l0 {
		t.Errorf("session-mode client: %d sessions welcomed and %d answers relayed on the loop, want none", w-w0, r.LoopTransactions()-l0)
	}

	// As many clients as servers: in session mode pgbench's -C would
	// otherwise block a thread connecting one client while another client
	// of that thread holds a server.
	for _, args := range [][]string{{"-C"}, {"-M", "prepared"}} {
		pgbench(t, r.url("bench"), append([]string{"-n", "-S", "-c", "2", "-j", "2", "-T", "1"}, args...)...)
	}
	if w, _ := r.LoopSessions(); w != w0 || r.LoopTransactions() != l0 {
		t.Errorf("pgbench on a session-mode database: %d sessions welcomed and %d answers relayed on the loop, want none", w-w0, r.LoopTransactions()-l0)
	}

	txn := connect(t, r.url("postgres"))
	for range 5 {
		pid(txn)
	}
	if w, _ := r.LoopSessions(); w == w0 || r.LoopTransactions() == l0 {
		t.Errorf("transaction-mode client: %d sessions welcomed and %d answers relayed on the loop, want both", w-w0, r.LoopTransactions()-l0)
	}
}

// TestEventLoopFlush: a client that describes a statement and waits on a
// Flush before it binds and executes (postgres.js does so for every
// statement whose parameter types it does not know yet) is served on the
// loop throughout, with PostgreSQL's answers, also when the described
// statement fails and only the Sync after it ends the group.
func TestEventLoopFlush(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 2, loop: true})
	a := dialRaw(t, r.addr)
	kinds := func(until func(pgproto3.BackendMessage) bool) []string {
		t.Helper()
		if err := a.fe.Flush(); err != nil {
			t.Fatal(err)
		}
		a.conn.SetDeadline(time.Now().Add(10 * time.Second))
		var got []string
		for {
			m, err := a.fe.Receive()
			if err != nil {
				t.Fatalf("after %q: %v", got, err)
			}
			k := fmt.Sprintf("%T", m)[len("*pgproto3."):]
			if d, ok := m.(*pgproto3.DataRow); ok {
				k += "(" + string(d.Values[0]) + ")"
			}
			got = append(got, k)
			if until(m) {
				return got
			}
		}
	}
	isRowDesc := func(m pgproto3.BackendMessage) bool { _, ok := m.(*pgproto3.RowDescription); return ok }
	isError := func(m pgproto3.BackendMessage) bool { _, ok := m.(*pgproto3.ErrorResponse); return ok }
	isReady := func(m pgproto3.BackendMessage) bool { _, ok := m.(*pgproto3.ReadyForQuery); return ok }
	handBacks := func() (n int64) {
		for _, c := range r.LoopHandBacks() {
			n += c
		}
		return n
	}
	before, backs := r.LoopTransactions(), handBacks()
	const n = 40
	for i := range n {
		name := []string{"", "s" + strconv.Itoa(i)}[i%2] // unnamed, and named as with prepare: true
		a.fe.Send(&pgproto3.Parse{Name: name, Query: "select $1::int + 1 as v"})
		a.fe.Send(&pgproto3.Describe{ObjectType: 'S', Name: name})
		a.fe.Send(&pgproto3.Flush{})
		if got, want := strings.Join(kinds(isRowDesc), " "), "ParseComplete ParameterDescription RowDescription"; got != want {
			t.Fatalf("describe %d: %s, want %s", i, got, want)
		}
		a.fe.Send(&pgproto3.Bind{PreparedStatement: name, Parameters: [][]byte{[]byte(strconv.Itoa(i))}})
		a.fe.Send(&pgproto3.Execute{})
		a.fe.Send(&pgproto3.Sync{})
		if got, want := strings.Join(kinds(isReady), " "), fmt.Sprintf("BindComplete DataRow(%d) CommandComplete ReadyForQuery", i+1); got != want {
			t.Fatalf("execute %d: %s, want %s", i, got, want)
		}
	}
	// Every answer ended in ReadyForQuery on the loop: none was left to
	// the session's goroutine after the Flush.
	if got := r.LoopTransactions() - before; got != n {
		t.Errorf("the loop relayed %d of %d answers", got, n)
	}
	if got := handBacks() - backs; got != 0 {
		t.Errorf("%d hand-backs to the goroutine (%v), want none", got, r.LoopHandBacks())
	}
	a.fe.Send(&pgproto3.Parse{Query: "select nothing from nowhere"})
	a.fe.Send(&pgproto3.Describe{ObjectType: 'S'})
	a.fe.Send(&pgproto3.Flush{})
	if got := kinds(isError); len(got) != 1 {
		t.Fatalf("failed describe: %q", got)
	}
	a.fe.Send(&pgproto3.Bind{})
	a.fe.Send(&pgproto3.Execute{})
	a.fe.Send(&pgproto3.Sync{})
	if got := strings.Join(kinds(isReady), " "); got != "ReadyForQuery" {
		t.Fatalf("after the failed describe: %s, want ReadyForQuery alone (skipped to the Sync)", got)
	}
	if got := a.query(t, "select 7"); len(got) != 1 || got[0] != "7" {
		t.Fatalf("after: %q", got)
	}
}
