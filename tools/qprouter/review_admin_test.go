// Review of the admin HTTP API and metrics through a running qprouter:
// findings proven by failing tests (TestAdminReview*).

package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

func rvGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// rvMetric is the value of the series named exactly series (name and
// labels) in a /metrics body, or -1.
func rvMetric(body, series string) float64 {
	for _, l := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

// A client naming a database whose name is not UTF-8 (PostgreSQL answers
// it 3D000 "database ... does not exist") gets XX000 "qprouter: internal
// error" when --admin is on (its session panics in the metrics' label
// lookup), and from then on, while its pool is listed, every scrape of
// /metrics answers 500: one client blanks the monitoring of every pool.
func TestAdminReviewNonUTF8DatabaseName(t *testing.T) {
	c := pgtest.Shared(t)
	addr, adminAddr, _ := rvStart(t, "--server-url", c.URL(), "--pool-mode", "transaction")
	bg := context.Background()
	url := "postgres://postgres@" + addr + "/postgres?sslmode=disable"
	good, err := pgx.Connect(bg, url)
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close(bg)
	if _, err := good.Exec(bg, "select 1"); err != nil {
		t.Fatal(err)
	}
	if code, body := rvGet(t, "http://"+adminAddr+"/metrics"); code != 200 {
		t.Fatalf("/metrics before: %d %.300s", code, body)
	}

	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = "caf\xe9" // Latin-1 "café"
	_, err = pgx.ConnectConfig(bg, cfg)
	if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || pe.Code != "3D000" {
		t.Errorf("client of database \"caf\\xe9\": %v; want PostgreSQL's 3D000 (database does not exist), as a direct connection gets", err)
	}
	code, body := rvGet(t, "http://"+adminAddr+"/metrics")
	if code != 200 {
		t.Errorf("/metrics after that client: %d, want 200\n%.400s", code, body)
	}
}

// In transaction mode on the event loop (the default), a client whose
// wait for a server ends in the acquire timeout (53300) is not observed in
// sqp_pool_acquire_duration_seconds, while with --event-loop=false the
// same wait is (a ~1 s sample). The histogram's range runs "to 10 s (an
// acquire timeout)" and the docs say the loop keeps "the counters and
// metrics" the same; the longest waits vanish from the metric exactly
// when the pool is exhausted.
func TestAdminReviewLoopAcquireTimeoutObserved(t *testing.T) {
	c := pgtest.Shared(t)
	addr, adminAddr, _ := rvStart(t, "--server-url", c.URL(), "--pool-mode", "transaction", "--pool-size", "1",
		"--acquire-timeout", "1s", "--event-loop=true")
	bg := context.Background()
	url := "postgres://postgres@" + addr + "/postgres?sslmode=disable"
	a, err := pgx.Connect(bg, url)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(bg)
	b, err := pgx.Connect(bg, url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(bg)
	for _, cn := range []*pgx.Conn{a, b} {
		if _, err := cn.Exec(bg, "select 1"); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := a.Begin(bg) // holds the pool's only server
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(bg, "select 1"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	sum := `sqp_pool_acquire_duration_seconds_sum{pool="postgres/postgres"}`
	_, m := rvGet(t, "http://"+adminAddr+"/metrics")
	before := rvMetric(m, sum)
	decisions := `sqp_routing_decisions_total{pool="postgres/postgres",route="primary"}`
	picked := rvMetric(m, decisions)
	if picked < 2 {
		t.Fatalf("setup: %s is %g after two clients' statements", decisions, picked)
	}
	t0 := time.Now()
	_, err = b.Exec(bg, "select 42")
	waited := time.Since(t0)
	if err == nil || !strings.Contains(err.Error(), "53300") {
		t.Fatalf("b: %v, want the acquire timeout 53300", err)
	}
	tx.Commit(bg)
	time.Sleep(200 * time.Millisecond)
	_, m = rvGet(t, "http://"+adminAddr+"/metrics")
	after := rvMetric(m, sum)
	if after-before < 0.9 {
		t.Errorf("%s went %g -> %g across a client's %v wait that ended in 53300; want it to grow by about 1 s (as with --event-loop=false)",
			sum, before, after, waited.Round(time.Millisecond))
	}
	if d := rvMetric(m, decisions); d != picked {
		t.Errorf("%s went %g -> %g: the failed acquire counted as a routing decision", decisions, picked, d)
	}
}

// While qprouter drains (SIGTERM / shutdown), its listener is closed and
// a new client is refused, yet GET /healthz still answers 200 "ok"
// (proxyserver's newAdmin gives no Options.Health): a load balancer or
// Kubernetes readiness probe keeps sending clients to it for the whole
// shutdown_timeout. Options.Health is documented as "whether the proxy is
// serving"; /healthz should answer 503 once the drain began.
func TestAdminReviewHealthzWhileDraining(t *testing.T) {
	c := pgtest.Shared(t)
	adminAddr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan string, 1)
	codec := make(chan int, 1)
	logs := &syncBuf{}
	go func() {
		codec <- run(ctx, []string{"--server-url", c.URL(), "--listen", "127.0.0.1:0", "--admin", adminAddr,
			"--pool-mode", "transaction", "--shutdown-timeout", "10s"}, logs, logs, nil, func(a string) { addrc <- a })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case code := <-codec:
		t.Fatalf("exited %d: %s", code, logs.String())
	}
	bg := context.Background()
	url := "postgres://postgres@" + addr + "/postgres?sslmode=disable"
	a, err := pgx.Connect(bg, url)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(bg)
	tx, err := a.Begin(bg) // keeps the drain going
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(bg, "select 1"); err != nil {
		t.Fatal(err)
	}
	if code, _ := rvGet(t, "http://"+adminAddr+"/healthz"); code != 200 {
		t.Fatalf("/healthz before the drain: %d", code)
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "draining") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	_, newErr := pgx.Connect(bg, url)
	code, body := rvGet(t, "http://"+adminAddr+"/healthz")
	if newErr != nil && code == 200 {
		t.Errorf("draining: a new client is refused (%v), yet /healthz answers %d %q; want 503", newErr, code, body)
	}
	if err := tx.Commit(bg); err != nil {
		t.Errorf("commit during drain: %v", err)
	}
	select {
	case <-codec:
	case <-time.After(10 * time.Second):
		t.Error("did not exit after the drain")
	}
}
