package proxy_test

// Behaviours the pgx and lib/pq test suites found different from a
// direct connection (docs/compatibility.md).

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// A client cancels its short query and leaves at once; the next client
// on the one server never sees that cancel (session mode reset the server
// and handed it on while the cancel was still being delivered).
func TestLateCancelHitsNoOne(t *testing.T) {
	c := pgtest.Shared(t)
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m, size: 1, timeout: 10 * time.Second})
			ctx := context.Background()
			for i := 0; i < 60; i++ {
				a, err := pgconn.Connect(ctx, r.url("postgres"))
				if err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					time.Sleep(5 * time.Millisecond)
					a.CancelRequest(ctx)
				}()
				a.Exec(ctx, "select pg_sleep(0.005)").ReadAll()
				a.Close(ctx)
				b, err := pgconn.Connect(ctx, r.url("postgres"))
				if err != nil {
					t.Fatal(err)
				}
				_, err = b.Exec(ctx, "select pg_sleep(0.05)").ReadAll()
				b.Close(ctx)
				wg.Wait()
				if err != nil {
					t.Fatalf("round %d: the next client's query: %v", i, err)
				}
			}
		})
	}
}

// Startup settings: one the server refuses refuses the login as
// PostgreSQL does, and explicit parameters win over -c options.
func TestStartupSettingsLikePostgres(t *testing.T) {
	c := pgtest.Shared(t)
	ctx := context.Background()
	login := func(url string) string {
		conn, err := pgconn.Connect(ctx, url)
		if err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) {
				return pe.Severity + " " + pe.Code + " " + pe.Message
			}
			return err.Error()
		}
		defer conn.Close(ctx)
		res, err := conn.Exec(ctx, "select current_setting('application_name') || ' ' || current_setting('work_mem')").ReadAll()
		if err != nil {
			return err.Error()
		}
		return string(res[0].Rows[0][0])
	}
	params := []string{
		"&options=-c%20doesnotexist%3D1%20-c%20work_mem%3D7MB&application_name=foo",
		"&work_mem=abc",
		"&options=-c%20application_name%3Dfromoptions%20-c%20work_mem%3D5MB&application_name=explicit",
	}
	for _, m := range modes {
		r := startProxy(t, c, cfg{mode: m, size: 2})
		for _, p := range params {
			want := login(c.URL() + p)
			if got := login(r.url("postgres") + p); got != want {
				t.Errorf("%v %s: through the proxy %q, direct %q", m, p, got, want)
			}
		}
		// the refused logins left the pool fine
		if got := login(r.url("postgres") + "&application_name=after"); got != "after 4MB" {
			t.Errorf("%v: after refused logins: %q", m, got)
		}
	}
}

// A server that ends with its own FATAL is not followed by a second one
// from the proxy.
func TestServerFatalIsTheLastWord(t *testing.T) {
	c := pgtest.Shared(t)
	ctx := context.Background()
	admin, err := pgconn.Connect(ctx, c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	r := startProxy(t, c, cfg{mode: proxy.Session, size: 2})
	victim, err := pgconn.Connect(ctx, r.url("postgres")+"&application_name=victim")
	if err != nil {
		t.Fatal(err)
	}
	hj, err := victim.Hijack()
	if err != nil {
		t.Fatal(err)
	}
	defer hj.Conn.Close()
	if _, err := admin.Exec(ctx, "select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'victim'").ReadAll(); err != nil {
		t.Fatal(err)
	}
	hj.Conn.SetDeadline(time.Now().Add(10 * time.Second))
	var errs []string
	for {
		msg, err := hj.Frontend.Receive()
		if err != nil {
			break
		}
		if e, ok := msg.(*pgproto3.ErrorResponse); ok {
			errs = append(errs, e.Severity+" "+e.Code)
		}
	}
	if got := strings.Join(errs, ", "); got != "FATAL 57P01" {
		t.Fatalf("errors after the server was terminated: %q, want the server's FATAL 57P01 only", got)
	}
}

// A server terminated while it sat idle in the pool is not handed to the
// next client (pgx's TestCheckIdleConn, through qprouter in session
// mode, does this): the client's query runs on another server instead of
// failing with "server connection lost".
func TestIdleServerTerminated(t *testing.T) {
	c := pgtest.Shared(t)
	ctx := context.Background()
	admin := connect(t, c.URL())
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m, size: 2})
			conn := connect(t, r.url("postgres"))
			for round := range 3 {
				var pid uint32
				if err := conn.QueryRow(ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
					t.Fatal(err)
				}
				if m == proxy.Session {
					conn.Close(ctx) // the server goes back to the pool
				}
				var ok bool
				if err := admin.QueryRow(ctx, "select pg_terminate_backend($1)", pid).Scan(&ok); err != nil || !ok {
					t.Fatalf("pg_terminate_backend(%d): %v %v", pid, ok, err)
				}
				time.Sleep(250 * time.Millisecond)
				if m == proxy.Session {
					conn = connect(t, r.url("postgres"))
				}
				var now uint32
				if err := conn.QueryRow(ctx, "select pg_backend_pid()").Scan(&now); err != nil {
					t.Fatalf("round %d: the query after the idle server %d was terminated: %v", round, pid, err)
				}
				if now == pid {
					t.Fatalf("round %d: still on the terminated server %d", round, pid)
				}
			}
		})
	}
}
