package proxy_test

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// Settings follow the client from server to server in transaction mode.
func TestSettingsReplay(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 3})
	ctx := context.Background()
	a := connect(t, r.url("postgres"))
	b := connect(t, r.url("postgres"))
	show := func(conn *pgx.Conn, name string) string {
		var v string
		if err := conn.QueryRow(ctx, "select current_setting($1)", name).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if _, err := a.Exec(ctx, "set search_path = pg_catalog, public"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec(ctx, "select set_config('application_name', 'qpr-a', false)"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec(ctx, "set local work_mem = '77MB'"); err != nil { // outside a transaction: no effect
		t.Fatal(err)
	}
	tx, _ := a.Begin(ctx)
	tx.Exec(ctx, "set statement_timeout = '9s'")
	tx.Rollback(ctx) // rolled back: not replayed
	rounds(t, b, func(i int) {
		if got := show(a, "search_path"); got != "pg_catalog, public" {
			t.Fatalf("search_path on round %d: %q", i, got)
		}
		if got := show(a, "application_name"); got != "qpr-a" {
			t.Fatalf("application_name on round %d: %q", i, got)
		}
		if got := show(a, "statement_timeout"); got != "0" {
			t.Fatalf("statement_timeout on round %d: %q", i, got)
		}
	}, func(int) {
		if got := show(b, "search_path"); got != `"$user", public` {
			t.Fatalf("b sees a's search_path: %q", got)
		}
	})
	// The client saw application_name change via ParameterStatus.
	if got := a.PgConn().ParameterStatus("application_name"); got != "qpr-a" {
		t.Errorf("ParameterStatus application_name = %q", got)
	}
	if _, err := a.Exec(ctx, "reset all"); err != nil {
		t.Fatal(err)
	}
	if got := show(a, "search_path"); got != `"$user", public` {
		t.Errorf("after reset all: %q", got)
	}
}

// Session mode: a client leaving resets its server and, in the same round
// trip, puts the client's startup settings back, so the next client with
// the same ones is welcomed without a replay; what the leaving client SET
// is gone all the same.
func TestSessionCheckInKeepsStartupSettings(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Session, size: 1})
	ctx := context.Background()
	show := func(conn *pgx.Conn, name string) string {
		t.Helper()
		var v string
		if err := conn.QueryRow(ctx, "select current_setting($1)", name).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	same := r.url("postgres") + "&application_name=qpr-same&search_path=pg_catalog"
	a, err := pgx.Connect(ctx, same)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec(ctx, "set work_mem = '77MB'"); err != nil {
		t.Fatal(err)
	}
	a.Close(ctx)
	if n := r.replays.Load(); n != 1 {
		t.Fatalf("replays after the first client: %d, want 1 (a fresh server)", n)
	}
	b := connect(t, same) // waits for a's server (pool of 1) to be checked in
	if got := show(b, "work_mem"); got != "4MB" {
		t.Errorf("b sees a's work_mem: %q", got)
	}
	if got := show(b, "application_name"); got != "qpr-same" {
		t.Errorf("b's application_name: %q", got)
	}
	if got := show(b, "search_path"); got != "pg_catalog" {
		t.Errorf("b's search_path: %q", got)
	}
	if n := r.replays.Load(); n != 1 {
		t.Errorf("replays after a client with the same startup settings: %d, want 1", n)
	}
	b.Close(ctx)
	d := connect(t, r.url("postgres")+"&application_name=qpr-other")
	if got := show(d, "application_name"); got != "qpr-other" {
		t.Errorf("d's application_name: %q", got)
	}
	if got := show(d, "search_path"); got != `"$user", public` {
		t.Errorf("d sees b's search_path: %q", got)
	}
	if n := r.replays.Load(); n != 2 {
		t.Errorf("replays after a client with other settings: %d, want 2", n)
	}
}

// A reported setting changed where the text matching cannot see it (inside
// a function) follows the client in transaction mode, from the server's
// ParameterStatus; one changed inside a rolled-back transaction does not.
func TestReportedSettingsFollow(t *testing.T) {
	c := pgtest.Shared(t)
	ctx := context.Background()
	direct := connect(t, c.URL())
	if _, err := direct.Exec(ctx, `create or replace function qpr_set_tz(tz text) returns void language plpgsql
		as $$ begin perform pg_catalog.set_config('TimeZone', tz, false); end $$`); err != nil {
		t.Fatal(err)
	}
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 3})
	a := connect(t, r.url("postgres"))
	b := connect(t, r.url("postgres"))
	show := func(conn *pgx.Conn) string {
		t.Helper()
		var v string
		if err := conn.QueryRow(ctx, "select current_setting('TimeZone')").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	def := show(b)
	if _, err := a.Exec(ctx, "select qpr_set_tz('Asia/Tokyo')"); err != nil {
		t.Fatal(err)
	}
	tx, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "select qpr_set_tz('America/Lima')"); err != nil {
		t.Fatal(err)
	}
	tx.Rollback(ctx)
	rounds(t, b, func(i int) {
		if got := show(a); got != "Asia/Tokyo" {
			t.Fatalf("a's TimeZone on round %d: %q", i, got)
		}
	}, func(i int) {
		if got := show(b); got != def {
			t.Fatalf("b sees a's TimeZone on round %d: %q", i, got)
		}
	})
}

// rounds runs during(i) 12 times while b keeps a server busy in turn (so
// that the other client lands on each server), then after(i) once b's
// statement is done.
func rounds(t *testing.T, b *pgx.Conn, during, after func(i int)) {
	t.Helper()
	for i := 0; i < 12; i++ {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.Exec(context.Background(), "select pg_sleep(0.01)")
		}()
		during(i)
		wg.Wait()
		after(i)
	}
}

// Advisory locks and temp tables pin; the pinned server is reset when the
// client leaves.
func TestPinning(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 2})
	ctx := context.Background()
	a := connect(t, r.url("postgres"))
	if _, err := a.Exec(ctx, "create temp table pinned_t(x int)"); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := a.Exec(ctx, "insert into pinned_t values ($1)", i); err != nil {
			t.Fatalf("temp table lost: %v", err)
		}
	}
	b := connect(t, r.url("postgres"))
	if _, err := b.Exec(ctx, "select pg_advisory_lock(4242)"); err != nil {
		t.Fatal(err)
	}
	var pid1, pid2 int
	b.QueryRow(ctx, "select pg_backend_pid()").Scan(&pid1)
	b.QueryRow(ctx, "select pg_backend_pid()").Scan(&pid2)
	if pid1 != pid2 {
		t.Errorf("advisory lock did not pin: %d then %d", pid1, pid2)
	}
	b.Close(ctx)
	// The lock went with the reset: another client can take it at once.
	d := connect(t, r.url("postgres"))
	time.Sleep(100 * time.Millisecond)
	var ok bool
	if err := d.QueryRow(ctx, "select pg_try_advisory_xact_lock(4242)").Scan(&ok); err != nil || !ok {
		t.Errorf("lock still held after the pinned client left: %v %v", ok, err)
	}
}

// Garbage from one client closes only that client.
func TestGarbageClients(t *testing.T) {
	c := pgtest.Shared(t)
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m, size: 4})
			ctx := context.Background()
			good := connect(t, r.url("postgres"))
			cases := [][]byte{
				[]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
				{0, 0, 0, 3},                                                // startup length too short
				{0, 0, 0, 8, 0, 3, 0, 0},                                    // startup with no parameters
				{0xff, 0xff, 0xff, 0xff},                                    // huge startup
				append(startup(), 'Q', 0, 0, 0, 2),                          // bad length
				append(startup(), 'Q', 0x7f, 0xff, 0xff, 0xff),              // oversize
				append(startup(), 'Z', 0, 0, 0, 4),                          // a backend message type
				append(startup(), 'B', 0, 0, 0, 6, 'x', 'y'),                // Bind without NULs
				append(startup(), 'P', 0, 0, 0, 5, 0),                       // Parse without query
				append(startup(), 'D', 0, 0, 0, 4),                          // Describe without kind
				append(startup(), 'Q', 0, 0, 0, 9, 's', 'e', 'l', 'e', 'c'), // truncated, then close
			}
			for i := 0; i < 20; i++ {
				junk := make([]byte, 200)
				rand.Read(junk)
				cases = append(cases, append(startup(), junk...))
			}
			for i, cs := range cases {
				conn, err := net.Dial("tcp", r.addr)
				if err != nil {
					t.Fatal(err)
				}
				conn.SetDeadline(time.Now().Add(3 * time.Second))
				conn.Write(cs)
				buf := make([]byte, 4096)
				for {
					if _, err := conn.Read(buf); err != nil {
						if ne, ok := err.(net.Error); ok && ne.Timeout() && i >= len(cases)-21 {
							break // valid-looking junk may wait for more bytes
						}
						break
					}
				}
				conn.Close()
				var n int
				if err := good.QueryRow(ctx, "select 5").Scan(&n); err != nil || n != 5 {
					t.Fatalf("after garbage case %d: %d %v", i, n, err)
				}
			}
			// The pool still works for new clients.
			after := connect(t, r.url("postgres"))
			var s string
			if err := after.QueryRow(ctx, "select 'fine'").Scan(&s); err != nil || s != "fine" {
				t.Fatalf("new client after garbage: %v", err)
			}
		})
	}
}

// startup is a StartupMessage for user postgres.
func startup() []byte {
	body := []byte{0, 3, 0, 0}
	body = append(body, "user\x00postgres\x00\x00"...)
	msg := binary.BigEndian.AppendUint32(nil, uint32(len(body)+4))
	return append(msg, body...)
}

func TestAcquireTimeout(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1, timeout: 300 * time.Millisecond})
	ctx := context.Background()
	a := connect(t, r.url("postgres"))
	b := connect(t, r.url("postgres"))
	tx, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	tx.Exec(ctx, "select 1")
	_, err = b.Exec(ctx, "select 1")
	if err == nil || !strings.Contains(err.Error(), "53300") || !strings.Contains(err.Error(), "no server connection available within 300ms for pool postgres/postgres") {
		t.Fatalf("acquire timeout: %v", err)
	}
}

func TestQueryEvents(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 2, events: true})
	ctx := context.Background()
	conn := connect(t, r.url("postgres"))
	conn.Exec(ctx, "select * from generate_series(1, 3)")
	conn.Exec(ctx, "select * from generate_series(1, $1::int)", 4)
	conn.Exec(ctx, "select 1/0")
	want := []proxy.QueryEvent{
		{SQL: "select * from generate_series(1, 3)", Rows: 3},
		{SQL: "select * from generate_series(1, $1::int)", Rows: 4, Prepared: true},
		{SQL: "select 1/0", SQLState: "22012"},
	}
	for i, w := range want {
		select {
		case e := <-r.events:
			if e.SQL != w.SQL || e.Rows != w.Rows || e.SQLState != w.SQLState || e.Prepared != w.Prepared || e.Pool != "postgres/postgres" || e.Duration <= 0 {
				t.Errorf("event %d: %+v, want %+v", i, e, w)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("event %d missing", i)
		}
	}
}

// TestQueryObservedAfterAnswer: OnQuery runs once the client has its
// answer, so a slow hook does not hold the client's round trip up.
func TestQueryObservedAfterAnswer(t *testing.T) {
	c := pgtest.Shared(t)
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			release := make(chan struct{})
			observed := make(chan string, 1)
			r := startProxy(t, c, cfg{mode: m, size: 2, onQuery: func(e proxy.QueryEvent) {
				<-release
				observed <- e.SQL
			}})
			conn := connect(t, r.url("postgres"))
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			var n int
			err := conn.QueryRow(ctx, "select 7", pgx.QueryExecModeSimpleProtocol).Scan(&n)
			close(release)
			if err != nil || n != 7 {
				t.Fatalf("answer while the hook waits: %d, %v", n, err)
			}
			select {
			case sql := <-observed:
				if sql != "select 7" {
					t.Errorf("observed %q", sql)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("statement never observed")
			}
		})
	}
}

// TestQueryHookPanic: a panicking OnQuery is contained: clients keep
// their connections and the pool's one server keeps serving them all.
func TestQueryHookPanic(t *testing.T) {
	c := pgtest.Shared(t)
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			var calls atomic.Int64
			r := startProxy(t, c, cfg{mode: m, size: 1, onQuery: func(proxy.QueryEvent) {
				calls.Add(1)
				panic("hook")
			}})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			a := connect(t, r.url("postgres"))
			for i := range 3 {
				var n int
				if err := a.QueryRow(ctx, "select $1::int", i).Scan(&n); err != nil || n != i {
					t.Fatalf("query %d: %d, %v", i, n, err)
				}
			}
			if m == proxy.Transaction { // in session mode a second client would wait for the first
				b := connect(t, r.url("postgres"))
				for i := range 3 {
					var n int
					if err := b.QueryRow(ctx, "select $1::int", i).Scan(&n); err != nil || n != i {
						t.Fatalf("second client, query %d: %d, %v", i, n, err)
					}
				}
			}
			if calls.Load() == 0 {
				t.Error("the hook never ran")
			}
		})
	}
}

// Server connections are reused across clients in both modes: a client
// leaving returns its server (reset in session mode), it is not closed.
func TestServersReused(t *testing.T) {
	c := pgtest.Shared(t)
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m, size: 4})
			ctx := context.Background()
			pids := map[int]bool{}
			for i := range 6 {
				conn := connect(t, r.url("postgres"))
				var pid int
				if err := conn.QueryRow(ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
					t.Fatal(err)
				}
				if i%2 == 0 {
					conn.Exec(ctx, "set work_mem = '5MB'")
					conn.Exec(ctx, "listen somewhere") // pins in transaction mode
				}
				pids[pid] = true
				conn.Close(ctx)
				time.Sleep(20 * time.Millisecond)
			}
			if len(pids) != 1 {
				t.Errorf("%d server connections used for 6 sequential clients", len(pids))
			}
			st := r.Pools()
			if len(st) != 1 || st[0].Idle != 1 || st[0].Active != 0 {
				t.Errorf("pools: %+v", st)
			}
			// The reset dropped the listener and the setting.
			conn := connect(t, r.url("postgres"))
			var wm string
			var listening int
			conn.QueryRow(ctx, "select current_setting('work_mem'), (select count(*) from pg_listening_channels())").Scan(&wm, &listening)
			if wm != "4MB" || listening != 0 {
				t.Errorf("state leaked to the next client: work_mem %s, %d channels", wm, listening)
			}
		})
	}
}

// A SET sent through the extended protocol is replayed too.
func TestSettingsReplayExtended(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 2})
	ctx := context.Background()
	a := connect(t, r.url("postgres"))
	b := connect(t, r.url("postgres"))
	if _, err := a.Exec(ctx, "set search_path = pg_catalog", pgx.QueryExecModeExec); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		tx, _ := b.Begin(ctx) // hold a server so a moves between the two
		tx.Exec(ctx, "select 1")
		var v string
		if err := a.QueryRow(ctx, "select current_setting('search_path')").Scan(&v); err != nil || v != "pg_catalog" {
			t.Fatalf("round %d: %q %v", i, v, err)
		}
		tx.Rollback(ctx)
		if err := a.QueryRow(ctx, "select current_setting('search_path')").Scan(&v); err != nil || v != "pg_catalog" {
			t.Fatalf("round %d: %q %v", i, v, err)
		}
	}
}

// The options startup parameter's -c settings apply in both modes.
func TestStartupOptions(t *testing.T) {
	c := pgtest.Shared(t)
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m, size: 2})
			conn := connect(t, r.url("postgres")+"&options=-c%20work_mem%3D7MB%20--statement-timeout%3D8s")
			var wm, st string
			if err := conn.QueryRow(context.Background(), "select current_setting('work_mem'), current_setting('statement_timeout')").Scan(&wm, &st); err != nil {
				t.Fatal(err)
			}
			if wm != "7MB" || st != "8s" {
				t.Errorf("work_mem %s, statement_timeout %s", wm, st)
			}
		})
	}
}
