package proxyserver

// Review of 1f02b37 (OnAcquire with an error, loop wait timeouts observed).

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// rv4Metric is the value of the series named exactly series in /metrics.
func rv4Metric(s *Server, series string) float64 {
	for _, l := range rvAdminMetricLines(s, series+" ") {
		if f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(l, series+" ")), 64); err == nil {
			return f
		}
	}
	return 0
}

// A transaction-mode client on the event loop that has SET a parameter
// waits for the pool's only server; when the server comes, the loop
// cannot take it (its settings differ: loopTake is false), releases it
// and hands the statement to the goroutine, which acquires again. One
// statement, one backend choice, yet OnAcquire is called twice (onGranted,
// then session.acquire): sqp_pool_acquire_duration_seconds_count and
// sqp_routing_decisions_total grow by 2.
func TestDiff4ReviewLoopGrantThenGoroutineObservedOnce(t *testing.T) { rv4Grant(t, true, true) }

func rv4Grant(t *testing.T, set, loop bool) {
	cl := pgtest.Shared(t)
	c := clusterConfig(cl, "transaction")
	c.Admin = "127.0.0.1:0"
	c.PoolSize = 1
	c.EventLoop = loop
	s, addr := serveForTest(t, Options{Config: c})
	bg := context.Background()
	url := "postgres://postgres@" + addr + "/postgres?sslmode=disable"
	a := pgxConnect(t, url)
	b := pgxConnect(t, url)
	qs := []string{"select 1"}
	if set {
		qs = append(qs, "set work_mem = '1234kB'", "select 1")
	}
	for _, q := range qs {
		if _, err := b.Exec(bg, q); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := a.Begin(bg) // a's settings: none; takes the only server
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(bg, "select 1"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	count := `sqp_pool_acquire_duration_seconds_count{pool="postgres/postgres"}`
	dec := `sqp_routing_decisions_total{pool="postgres/postgres",route="primary"}`
	c0, d0 := rv4Metric(s, count), rv4Metric(s, dec)
	done := make(chan error, 1)
	go func() {
		var wm string
		err := b.QueryRow(bg, "select current_setting('work_mem')", pgx.QueryExecModeSimpleProtocol).Scan(&wm)
		if err == nil && set && wm != "1234kB" {
			err = fmt.Errorf("work_mem %s, want the client's 1234kB", wm)
		}
		done <- err
	}()
	time.Sleep(300 * time.Millisecond) // b waits for the server
	if err := tx.Commit(bg); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	c1, d1 := rv4Metric(s, count), rv4Metric(s, dec)
	// a's COMMIT needs no acquire (a holds the server); b's statement one.
	if c1-c0 != 1 || d1-d0 != 1 {
		t.Errorf("one waiting statement: %s grew by %g and %s by %g; want 1 each (one acquire, one backend choice)", count, c1-c0, dec, d1-d0)
	}
}

// A loop waiter granted a slot (the held server was discarded) counts a
// routing decision in onGranted before it connects; when the connection
// then fails (here the role may no longer log in), the client gets the
// error but the failed acquire stays counted as a backend choice, which
// 1f02b37 says a failed acquire is not (the goroutine's acquire passes the
// error: with --event-loop=false nothing is counted).
func TestDiff4ReviewLoopSlotConnectFailureNotADecision(t *testing.T) { rv4Slot(t, true) }

func rv4Slot(t *testing.T, loop bool) {
	cl := pgtest.Shared(t)
	execForTest(t, cl.URL(), "drop role if exists zzdiff_u", "create role zzdiff_u login")
	defer execForTest(t, cl.URL(), "alter role zzdiff_u connection limit -1")
	c := clusterConfig(cl, "transaction")
	c.Admin = "127.0.0.1:0"
	c.PoolSize = 1
	c.EventLoop = loop
	c.AcquireTimeout = 5 * time.Second
	s, addr := serveForTest(t, Options{Config: c})
	bg := context.Background()
	url := "postgres://zzdiff_u@" + addr + "/postgres?sslmode=disable"
	a := pgxConnect(t, url)
	b := pgxConnect(t, url)
	if _, err := b.Exec(bg, "select 1", pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	tx, err := a.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := tx.QueryRow(bg, "select pg_backend_pid()", pgx.QueryExecModeSimpleProtocol).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	execForTest(t, cl.URL(), "alter role zzdiff_u connection limit 0")
	time.Sleep(200 * time.Millisecond)
	dec := `sqp_routing_decisions_total{pool="postgres/zzdiff_u",route="primary"}`
	d0 := rv4Metric(s, dec)
	done := make(chan error, 1)
	go func() {
		_, err := b.Exec(bg, "select 2", pgx.QueryExecModeSimpleProtocol)
		done <- err
	}()
	time.Sleep(300 * time.Millisecond) // b waits for the server
	execForTest(t, cl.URL(), "select pg_terminate_backend("+strconv.Itoa(pid)+")")
	tx.Commit(bg) // the server is gone: discarded, its slot goes to b
	err = <-done
	if err == nil {
		t.Fatal("b's statement succeeded; the setup wants its connection refused")
	}
	time.Sleep(200 * time.Millisecond)
	if d := rv4Metric(s, dec) - d0; d != 0 {
		t.Errorf("b's acquire failed (%v), yet %s grew by %g; want 0", err, dec, d)
	}
}
