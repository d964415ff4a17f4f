package proxy_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/pgwire"
	"github.com/qpkit/qpkit/pkg/proxy"
)

func bin(t testing.TB, name string) string {
	t.Helper()
	dir, err := pgtest.FindBinDir()
	if err != nil {
		t.Skip(err)
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s not found: %v", name, err)
	}
	return p
}

var benchOnce sync.Once

// benchDB creates database bench with pgbench's tables (scale 1) once.
func benchDB(t testing.TB, c *pgtest.Cluster) {
	t.Helper()
	benchOnce.Do(func() {
		conn := connect(t, c.URL())
		if _, err := conn.Exec(context.Background(), "create database bench"); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin(t, "pgbench"), "-i", "-s", "1", "-q", "-I", "dtGp", c.DBURL("bench")).CombinedOutput()
		if err != nil {
			t.Fatalf("pgbench -i: %v\n%s", err, out)
		}
	})
}

var failedRe = regexp.MustCompile(`number of failed transactions: (\d+)`)
var txRe = regexp.MustCompile(`number of transactions actually processed: (\d+)`)

func pgbench(t *testing.T, url string, args ...string) string {
	t.Helper()
	args = append(args, url)
	out, err := exec.Command(bin(t, "pgbench"), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("pgbench %v: %v\n%s", args, err, out)
	}
	if m := failedRe.FindSubmatch(out); m != nil && string(m[1]) != "0" {
		t.Fatalf("pgbench %v: %s failed transactions\n%s", args, m[1], out)
	}
	m := txRe.FindSubmatch(out)
	if m == nil || string(m[1]) == "0" {
		t.Fatalf("pgbench %v: no transactions\n%s", args, out)
	}
	return string(out)
}

// The acceptance load: 32 pgbench clients over a pool of 8, every
// protocol, select-only and TPC-B, in both modes.
func TestPgbench(t *testing.T) {
	c := pgtest.Shared(t)
	benchDB(t, c)
	secs := "2"
	if os.Getenv("QPROUTER_LONG") != "" {
		secs = "10"
	}
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m, size: 8, timeout: 30 * time.Second})
			clients := "32"
			if m == proxy.Session {
				clients = "8" // one server each
			}
			for _, proto := range []string{"prepared", "extended", "simple"} {
				for _, script := range [][]string{{"-S"}, {"-b", "tpcb-like"}} {
					if testing.Short() && proto != "prepared" {
						continue
					}
					d := secs
					if proto != "prepared" && d == "2" {
						d = "1"
					}
					args := append([]string{"-M", proto, "-c", clients, "-j", "2", "-T", d, "-n"}, script...)
					out := pgbench(t, r.url("bench"), args...)
					t.Logf("%s %v: %s", m, args, strings.Join(regexp.MustCompile(`(?m)^tps.*$`).FindAllString(out, -1), "; "))
				}
			}
		})
	}
}

func TestPsql(t *testing.T) {
	c := pgtest.Shared(t)
	psql := bin(t, "psql")
	script := `
select 1 as one;
\set ON_ERROR_STOP 0
select 1/0;
\set ON_ERROR_STOP 1
create temp table tt(a int, b text);
\copy tt from stdin
1	x
2	y
\.
select * from tt order by a;
copy (select a*10, b from tt order by a) to stdout;
set search_path = pg_catalog, public;
show search_path;
begin;
select count(*) from tt;
commit;
\d tt
`
	run := func(url string) string {
		cmd := exec.Command(psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", url)
		cmd.Stdin = strings.NewReader(script)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("psql: %v\n%s", err, out)
		}
		return regexp.MustCompile(`pg_temp_\d+`).ReplaceAllString(string(out), "pg_temp_N")
	}
	want := run(c.URL())
	for _, m := range modes {
		r := startProxy(t, c, cfg{mode: m, size: 2})
		if got := run(r.url("postgres")); got != want {
			t.Errorf("%s: psql through the proxy:\n%s\nwant:\n%s", m, got, want)
		}
	}
}

func TestCopyBothWays(t *testing.T) {
	c := pgtest.Shared(t)
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m, size: 2})
			conn := connect(t, r.url("postgres"))
			ctx := context.Background()
			table := "copy_" + m.String()
			if _, err := conn.Exec(ctx, fmt.Sprintf("drop table if exists %s; create table %s(a int, b text)", table, table)); err != nil {
				t.Fatal(err)
			}
			rows := make([][]any, 5000)
			for i := range rows {
				rows[i] = []any{i, strings.Repeat("x", i%100)}
			}
			n, err := conn.CopyFrom(ctx, pgx.Identifier{table}, []string{"a", "b"}, pgx.CopyFromRows(rows))
			if err != nil || n != int64(len(rows)) {
				t.Fatalf("copy from: %d %v", n, err)
			}
			var buf strings.Builder
			tag, err := conn.PgConn().CopyTo(ctx, &buf, "copy "+table+" to stdout")
			if err != nil || tag.RowsAffected() != int64(len(rows)) {
				t.Fatalf("copy to: %v %v", tag, err)
			}
			if lines := strings.Count(buf.String(), "\n"); lines != len(rows) {
				t.Fatalf("copy to: %d lines", lines)
			}
			// A failing COPY leaves the session usable.
			_, err = conn.PgConn().CopyFrom(ctx, strings.NewReader("1\tx\nnot a number\tx\n"), "copy "+table+" from stdin")
			if err == nil || !strings.Contains(err.Error(), "22P02") {
				t.Fatalf("bad copy: %v", err)
			}
			var count int
			if err := conn.QueryRow(ctx, "select count(*) from "+table).Scan(&count); err != nil || count != len(rows) {
				t.Fatalf("count after failed copy: %d %v", count, err)
			}
		})
	}
}

func TestListenNotify(t *testing.T) {
	c := pgtest.Shared(t)
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m, size: 2})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			listener := connect(t, r.url("postgres"))
			if _, err := listener.Exec(ctx, "listen qpr_chan"); err != nil {
				t.Fatal(err)
			}
			// Other clients keep working (the listener pins one of two servers).
			other := connect(t, r.url("postgres"))
			for i := range 5 {
				if _, err := other.Exec(ctx, "select pg_notify('qpr_chan', $1)", fmt.Sprint(i)); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 5 {
				n, err := listener.WaitForNotification(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if n.Channel != "qpr_chan" || n.Payload != fmt.Sprint(i) {
					t.Fatalf("notification %d: %+v", i, n)
				}
			}
			if m == proxy.Transaction {
				pinned := false
				for _, cs := range r.Clients() {
					pinned = pinned || cs.Pinned
				}
				if !pinned {
					t.Error("LISTEN did not pin the client")
				}
			}
		})
	}
}

func TestCancel(t *testing.T) {
	c := pgtest.Shared(t)
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m, size: 2})
			conn := connect(t, r.url("postgres"))
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			t0 := time.Now()
			_, err := conn.Exec(ctx, "select pg_sleep(20)")
			if err == nil {
				t.Fatal("pg_sleep was not cancelled")
			}
			if d := time.Since(t0); d > 5*time.Second {
				t.Fatalf("cancel took %s", d)
			}
			// pgx closes a connection whose query was interrupted; a new
			// one works and the servers are fine.
			conn2 := connect(t, r.url("postgres"))
			var n int
			if err := conn2.QueryRow(context.Background(), "select 7").Scan(&n); err != nil || n != 7 {
				t.Fatalf("after cancel: %d %v", n, err)
			}
		})
	}
}

// cancelSleep runs pg_sleep(20) on conn and cancels it with a
// CancelRequest on a connection of its own, which must end it with 57014.
func cancelSleep(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	pc := conn.PgConn()
	done := make(chan error, 1)
	go func() {
		_, err := pc.Exec(context.Background(), "select pg_sleep(20)").ReadAll()
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	if err := pc.CancelRequest(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "57014") {
			t.Fatalf("cancelled query: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancel not delivered")
	}
}

// TestServerPIDInSessionMode: a session-mode client's BackendKeyData
// carries its server's PID, so pg_terminate_backend() of the PID its
// driver reports ends that client as on a direct connection (pgx's own
// suite does this), and cancelling still works; a transaction-mode
// client, which moves between servers, gets a synthetic PID above any
// Linux process ID.
func TestServerPIDInSessionMode(t *testing.T) {
	c := pgtest.Shared(t)
	ctx := context.Background()
	backendPID := func(conn *pgx.Conn) uint32 {
		t.Helper()
		var pid uint32
		if err := conn.QueryRow(ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		return pid
	}
	t.Run("session", func(t *testing.T) {
		r := startProxy(t, c, cfg{mode: proxy.Session, size: 3})
		victim, killer := connect(t, r.url("postgres")), connect(t, r.url("postgres"))
		for _, conn := range []*pgx.Conn{victim, killer} {
			if got, want := conn.PgConn().PID(), backendPID(conn); got != want {
				t.Fatalf("BackendKeyData PID %d, pg_backend_pid() %d", got, want)
			}
		}
		cancelSleep(t, killer) // the key with the real PID still cancels
		var ok bool
		if err := killer.QueryRow(ctx, "select pg_terminate_backend($1)", victim.PgConn().PID()).Scan(&ok); err != nil || !ok {
			t.Fatalf("pg_terminate_backend: %v %v", ok, err)
		}
		var n int
		err := victim.QueryRow(ctx, "select 1").Scan(&n)
		if err == nil || !strings.Contains(err.Error(), "57P01") {
			t.Fatalf("terminated client's next query: %d %v, want 57P01", n, err)
		}
		fresh := connect(t, r.url("postgres"))
		if err := fresh.QueryRow(ctx, "select 2").Scan(&n); err != nil || n != 2 {
			t.Fatalf("after the termination: %d %v", n, err)
		}
		if got, want := fresh.PgConn().PID(), backendPID(fresh); got != want {
			t.Fatalf("new client: BackendKeyData PID %d, pg_backend_pid() %d", got, want)
		}
	})
	t.Run("handed on", func(t *testing.T) {
		// One server: the next client gets it while the last one is
		// still being forgotten, and takes its PID over.
		r := startProxy(t, c, cfg{mode: proxy.Session, size: 1})
		for i := range 5 {
			first := connect(t, r.url("postgres"))
			pid := backendPID(first)
			next := make(chan *pgx.Conn, 1)
			go func() {
				conn, err := pgx.Connect(ctx, r.url("postgres"))
				if err != nil {
					t.Error(err)
				}
				next <- conn
			}()
			time.Sleep(50 * time.Millisecond) // waiting for the server
			first.Close(ctx)
			second := <-next
			if second == nil {
				t.FailNow()
			}
			got, want := second.PgConn().PID(), backendPID(second)
			second.Close(ctx)
			if got != want || want != pid {
				t.Fatalf("round %d: the next client's PID %d, its backend %d, the server's before %d", i, got, want, pid)
			}
		}
	})
	t.Run("transaction", func(t *testing.T) {
		r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 2})
		conn := connect(t, r.url("postgres"))
		if pid := conn.PgConn().PID(); pid < pgwire.SyntheticPIDBase || pid == backendPID(conn) {
			t.Fatalf("transaction mode: PID %d, want a synthetic one >= %d", pid, pgwire.SyntheticPIDBase)
		}
		cancelSleep(t, conn)
	})
}

func TestCancelKeepsSession(t *testing.T) {
	c := pgtest.Shared(t)
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m, size: 2})
			conn := connect(t, r.url("postgres"))
			cancelSleep(t, conn)
			var n int
			if err := conn.QueryRow(context.Background(), "select 8").Scan(&n); err != nil || n != 8 {
				t.Fatalf("after cancel: %d %v", n, err)
			}
		})
	}
}
