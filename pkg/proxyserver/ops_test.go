package proxyserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// opsServe starts a proxy over a throwaway cluster with the admin console
// (user "admin", trust) in transaction mode.
func opsServe(t *testing.T, edit func(*Config)) (*Server, string, *pgtest.Cluster) {
	t.Helper()
	return consoleServe(t, pgtest.Start(t, pgtest.Options{}), "transaction", edit)
}

// opsConsole connects to the console as admin.
func opsConsole(t *testing.T, addr string) *pgconn.PgConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pc, err := pgconn.Connect(ctx, "postgres://admin@"+addr+"/pgbouncer?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close(context.Background()) })
	return pc
}

// opsShow runs a console command and returns its rows as column -> value
// maps.
func opsShow(t *testing.T, pc *pgconn.PgConn, q string) []map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := pc.Exec(ctx, q).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", q, err)
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
	return out
}

// A client waiting for a paused pool counts in SHOW POOLS' cl_waiting and
// shows its wait in SHOW CLIENTS, but SHOW POOLS' maxwait stays 0: it is
// taken from the pool's queue only, which a paused client never joins.
// PgBouncer's maxwait (and docs/qprouter.md: "the longest a client has
// waited for a server") counts clients held by a PAUSE.
func TestMaxwaitWhilePaused(t *testing.T) {
	_, addr, _ := opsServe(t, nil)
	ctx := context.Background()
	cn := pgxConnect(t, "postgres://postgres@"+addr+"/postgres?sslmode=disable")
	if _, err := cn.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	con := opsConsole(t, addr)
	opsShow(t, con, "PAUSE postgres")
	done := make(chan error, 1)
	go func() { _, err := cn.Exec(ctx, "SELECT 1"); done <- err }()
	time.Sleep(1500 * time.Millisecond)
	var wait, maxwait, waiting string
	for _, r := range opsShow(t, con, "SHOW CLIENTS") {
		if r["database"] == "postgres" {
			wait = r["wait"]
		}
	}
	for _, r := range opsShow(t, con, "SHOW POOLS") {
		if r["database"] == "postgres" {
			maxwait, waiting = r["maxwait"], r["cl_waiting"]
		}
	}
	opsShow(t, con, "RESUME")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if waiting != "1" || wait != "1" {
		t.Fatalf("setup: cl_waiting %q, the client's wait %q", waiting, wait)
	}
	if n, _ := strconv.Atoi(maxwait); n < 1 {
		t.Errorf("SHOW POOLS: cl_waiting %s and SHOW CLIENTS wait %s s, but maxwait %q (want >= 1)", waiting, wait, maxwait)
	}
}

// While a pool is paused, a client that sent a statement is "waiting" in
// GET /api/clients (and cl_waiting in SHOW POOLS), but GET /api/pools says
// "waiting": 0 for its pool and sqp_pool_waiting_clients is 0: both take
// the pool's queue only, which a client held by a pause never joins.
func TestAPIWaitingWhilePaused(t *testing.T) {
	s, addr, _ := opsServe(t, func(c *Config) { c.Admin = "127.0.0.1:0" })
	ctx := context.Background()
	cn := pgxConnect(t, "postgres://postgres@"+addr+"/postgres?sslmode=disable")
	if _, err := cn.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	get := func(path string) string {
		w := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if path == "/api/pause" || path == "/api/resume" {
			req = httptest.NewRequest(http.MethodPost, path, nil)
		}
		s.admin.ServeHTTP(w, req)
		return w.Body.String()
	}
	get("/api/pause")
	done := make(chan error, 1)
	go func() { _, err := cn.Exec(ctx, "SELECT 1"); done <- err }()
	time.Sleep(500 * time.Millisecond)
	clients, pools, metrics := get("/api/clients"), get("/api/pools"), get("/metrics")
	get("/api/resume")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var ca struct {
		Clients []struct{ State string } `json:"clients"`
	}
	var pa struct {
		Pools []struct {
			Waiting int  `json:"waiting"`
			Paused  bool `json:"paused"`
		} `json:"pools"`
	}
	json.Unmarshal([]byte(clients), &ca)
	json.Unmarshal([]byte(pools), &pa)
	if len(ca.Clients) != 1 || ca.Clients[0].State != "waiting" || len(pa.Pools) != 1 || !pa.Pools[0].Paused {
		t.Fatalf("setup: %s %s", clients, pools)
	}
	var gauge string
	for _, l := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(l, "sqp_pool_waiting_clients{") {
			gauge = l
		}
	}
	if pa.Pools[0].Waiting != 1 || !strings.HasSuffix(gauge, " 1") {
		t.Errorf("a client waits on the paused pool (GET /api/clients: state %q), but GET /api/pools waiting = %d and %q",
			ca.Clients[0].State, pa.Pools[0].Waiting, gauge)
	}
}

// SHOW STATS keys its counters by the pool name cut at its first "/", so a
// database whose name has a "/" is reported under a database that does
// not exist (SHOW POOLS shows the right name).
func TestStatsDatabaseWithSlash(t *testing.T) {
	_, addr, cl := opsServe(t, nil)
	execForTest(t, cl.URL(), `CREATE DATABASE "ops/app"`)
	ctx := context.Background()
	cn := pgxConnect(t, "postgres://postgres@"+addr+"/ops%2Fapp?sslmode=disable")
	var db string
	if err := cn.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil || db != "ops/app" {
		t.Fatalf("connected to %q: %v", db, err)
	}
	con := opsConsole(t, addr)
	var pools, stats []string
	for _, r := range opsShow(t, con, "SHOW POOLS") {
		pools = append(pools, r["database"])
	}
	for _, r := range opsShow(t, con, "SHOW STATS") {
		stats = append(stats, r["database"])
	}
	found := false
	for _, d := range stats {
		found = found || d == "ops/app"
	}
	if !found {
		t.Errorf("SHOW POOLS databases %q, SHOW STATS databases %q: no stats row for ops/app", pools, stats)
	}
}

// SHOW TOTALS' avg_xact_time and avg_query_time are the unweighted mean
// of the databases' averages, a database without a transaction in the
// period counting as 0. PgBouncer's SHOW TOTALS (stats.c
// show_stat_totals) sums the pools' counters and divides the summed
// transaction time by the summed transaction count: one database with
// 60 transactions of 1 ms and one idle database average 1 ms, not 0.5 ms.
func TestTotalsAverageTimes(t *testing.T) {
	s, addr := serveForTest(t, func() Options {
		c := valid()
		c.AdminUsers = []string{"admin"}
		c.ConsoleDatabase = "pgbouncer"
		return Options{Config: c}
	}())
	st := s.stats
	st.transaction("busy/u", time.Millisecond)
	st.query("busy/u", time.Millisecond)
	st.transaction("idle/u", time.Millisecond)
	st.query("idle/u", time.Millisecond)
	t0 := time.Now().Add(-time.Minute)
	st.mu.Lock()
	st.prev, st.prevAt = map[string]totals{}, t0
	st.last, st.lastAt = map[string]totals{
		"busy": {xacts: 60, queries: 60, xactTime: 60 * time.Millisecond, queryTime: 60 * time.Millisecond},
		"idle": {},
	}, t0.Add(time.Minute)
	st.mu.Unlock()
	con := opsConsole(t, addr)
	per := map[string]map[string]string{}
	for _, r := range opsShow(t, con, "SHOW STATS") {
		per[r["database"]] = r
	}
	got := map[string]string{}
	for _, r := range opsShow(t, con, "SHOW TOTALS") {
		got[r["name"]] = r["value"]
	}
	if per["busy"]["avg_xact_time"] != "1000" {
		t.Fatalf("setup: SHOW STATS busy avg_xact_time %q", per["busy"]["avg_xact_time"])
	}
	if got["avg_xact_time"] != "1000" || got["avg_query_time"] != "1000" {
		t.Errorf("SHOW TOTALS avg_xact_time %s avg_query_time %s µs; every transaction and query of the period took 1000 µs (SHOW STATS: busy %s, idle %s)",
			got["avg_xact_time"], got["avg_query_time"], per["busy"]["avg_xact_time"], per["idle"]["avg_xact_time"])
	}
}

// drainWithPause runs a drain with a client queued for the only server, with or
// without a POST /api/pause once the drain has begun; it returns the
// queued client's error, how long its answer took after the transaction
// holding the server ended, the pause's HTTP status and how long Serve
// took to return after the shutdown began.
func drainWithPause(t *testing.T, pauseDuringDrain bool) (error, time.Duration, int, time.Duration) {
	cl := pgtest.Start(t, pgtest.Options{})
	c := valid()
	c.ServerURL = fmt.Sprintf("postgres://127.0.0.1:%d/postgres?sslmode=disable", cl.Port)
	c.PoolMode = "transaction"
	c.AcquireTimeout = 12 * time.Second
	c.IdleTimeout = time.Minute
	c.MaxLifetime = time.Hour
	c.PoolSize = 1
	c.Admin = "127.0.0.1:0"
	c.ShutdownTimeout = 4 * time.Second
	ready := make(chan string, 1)
	s, err := New(Options{Config: c, Ready: func(a string) { ready <- a }})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan time.Time, 1)
	go func() { s.Serve(context.Background()); served <- time.Now() }()
	addr := <-ready
	ctx := context.Background()
	url := "postgres://postgres@" + addr + "/postgres?sslmode=disable"
	a := pgxConnect(t, url)
	b, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	if _, err := a.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	type res struct {
		err error
		at  time.Time
	}
	bres := make(chan res, 1)
	go func() {
		var n int
		err := b.QueryRow(ctx, "SELECT 42").Scan(&n)
		bres <- res{err, time.Now()}
	}()
	for i := 0; ; i++ {
		if ps := s.proxy.Pools(); len(ps) == 1 && ps[0].Waiting == 1 {
			break
		}
		if i > 200 {
			t.Fatal("b never queued")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	s.shutdown() // the console's SHUTDOWN, as SIGTERM
	time.Sleep(300 * time.Millisecond)
	code := 0
	if pauseDuringDrain {
		w := httptest.NewRecorder()
		s.admin.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/api/pause", nil))
		code = w.Code
	}
	t0 := time.Now()
	if _, err := a.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	r := <-bres
	var stopped time.Duration
	select {
	case at := <-served:
		stopped = at.Sub(start)
	case <-time.After(60 * time.Second):
		t.Fatal("Serve did not return within 60s")
	}
	return r.err, r.at.Sub(t0), code, stopped
}

// SIGTERM (and SHUTDOWN) resume every pool so that the drain lets the
// clients under way finish ("SIGTERM resumes everything to drain"), but
// the admin API keeps listening during the drain and its POST /api/pause
// is accepted (200) and pauses every pool again: a client queued for a
// server then never gets one and is cut instead of getting its answer,
// and the process exits only when that client's acquire_timeout (30s)
// ends, long after shutdown_timeout (4s). Without the pause the client
// gets its answer at once (TestDrainBaseline).
func TestPauseDuringDrain(t *testing.T) {
	err, took, code, stopped := drainWithPause(t, true)
	if err != nil || stopped > 6*time.Second {
		t.Errorf("POST /api/pause during the drain answered %d; the queued client's SELECT then ended after %v with %v; Serve returned %v after the shutdown began (shutdown_timeout 4s)",
			code, took.Round(time.Millisecond), err, stopped.Round(time.Millisecond))
	}
}

func TestDrainBaseline(t *testing.T) {
	if err, took, _, stopped := drainWithPause(t, false); err != nil || took > time.Second || stopped > 6*time.Second {
		t.Errorf("baseline: %v after %v; Serve returned after %v", err, took, stopped)
	}
}

// GET /api/clients gives each client's remote address as its "id": two
// clients on the Unix socket have the same id ("@"), so the id does not
// tell them apart (SHOW CLIENTS' ptr, the cancel-key PID, does).
func TestClientIDsUnique(t *testing.T) {
	dir := t.TempDir()
	s, addr, _ := opsServe(t, func(c *Config) {
		c.Admin = "127.0.0.1:0"
		c.UnixSocketDir = dir
		c.UnixSocketMode = "0777"
	})
	_, port, _ := net.SplitHostPort(addr)
	ctx := context.Background()
	for range 2 {
		cn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@/postgres?host=%s&port=%s&sslmode=disable", dir, port))
		if err != nil {
			t.Fatal(err)
		}
		defer cn.Close(ctx)
		if _, err := cn.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	w := httptest.NewRecorder()
	s.admin.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/clients", nil))
	var ans struct {
		Clients []struct {
			ID   string `json:"id"`
			Addr string `json:"addr"`
		} `json:"clients"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &ans); err != nil || len(ans.Clients) != 2 {
		t.Fatalf("%v: %s", err, w.Body.String())
	}
	if ans.Clients[0].ID == ans.Clients[1].ID {
		t.Errorf("two clients with the same id %q: %s", ans.Clients[0].ID, w.Body.String())
	}
}

// SHOW LISTS' users counts the users of SHOW POOLS (the console's own
// "pgbouncer" pool included), not the users SHOW USERS lists (the auth
// file's and the pools'): in PgBouncer both come from the same user list,
// so SHOW LISTS users is SHOW USERS' row count.
func TestListsUsers(t *testing.T) {
	dir := t.TempDir()
	auth := dir + "/users.txt"
	if err := os.WriteFile(auth, []byte("\"admin\" \"pw\"\n\"alice\" \"pw\"\n\"bob\" \"pw\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, addr, _ := opsServe(t, func(c *Config) { c.AuthFile = auth })
	con := pgconnConnect(t, "postgres://admin:pw@"+addr+"/pgbouncer?sslmode=disable")
	var users []string
	for _, r := range opsShow(t, con, "SHOW USERS") {
		users = append(users, r["name"])
	}
	lists := map[string]string{}
	for _, r := range opsShow(t, con, "SHOW LISTS") {
		lists[r["list"]] = r["items"]
	}
	if lists["users"] != strconv.Itoa(len(users)) {
		t.Errorf("SHOW USERS lists %d users %q, SHOW LISTS says users %s", len(users), users, lists["users"])
	}
}

// Console and admin API listings, SET, RELOAD, PAUSE/RESUME and scrapes
// while clients come and go, under the race detector.
func TestOpsConcurrent(t *testing.T) {
	s, addr, _ := opsServe(t, func(c *Config) { c.Admin = "127.0.0.1:0"; c.PoolSize = 3 })
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				cn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable&application_name=c%d", addr, i))
				if err != nil {
					continue
				}
				for range 5 {
					cn.Exec(ctx, "SELECT pg_sleep(0.001)")
				}
				cn.Close(ctx)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, path := range []string{"/api/pools", "/api/clients", "/api/databases", "/metrics", "/api/stats/digests?limit=3"} {
				w := httptest.NewRecorder()
				s.admin.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
				if w.Code != 200 {
					t.Errorf("%s: %d %s", path, w.Code, w.Body.String())
				}
			}
		}
	}()
	con := opsConsole(t, addr)
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		for _, q := range []string{"SHOW POOLS", "SHOW CLIENTS", "SHOW SERVERS", "SHOW DATABASES", "SHOW USERS", "SHOW CONFIG",
			"SHOW STATS", "SHOW TOTALS", "SHOW LISTS", "SHOW STATE", "SET client_idle_timeout = 60", "RELOAD", "PAUSE", "RESUME", "RECONNECT"} {
			opsShow(t, con, q)
		}
	}
	close(stop)
	wg.Wait()
}
