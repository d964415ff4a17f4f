// Review of the admin HTTP API and metrics as a running proxy feeds them.

package proxyserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// rvAdminServe starts a proxy with the admin API over a throwaway cluster.
func rvAdminServe(t *testing.T, edit func(*Config, *pgtest.Cluster), before func(*Server)) (*Server, string, *pgtest.Cluster) {
	t.Helper()
	cl := pgtest.Start(t, pgtest.Options{})
	c := clusterConfig(cl, "session")
	c.Admin = "127.0.0.1:0"
	c.HealthCheckAfter = 30 * time.Second
	if edit != nil {
		edit(&c, cl)
	}
	s, addr := serveAfter(t, Options{Config: c}, before)
	return s, addr, cl
}

// rvAdminDo runs one request against the admin API.
func rvAdminDo(s *Server, method, path string) (int, string) {
	w := httptest.NewRecorder()
	s.admin.ServeHTTP(w, httptest.NewRequest(method, path, nil))
	return w.Code, w.Body.String()
}

// rvAdminMetricLines returns the /metrics lines that start with prefix.
func rvAdminMetricLines(s *Server, prefix string) []string {
	_, body := rvAdminDo(s, http.MethodGet, "/metrics")
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// rvAdminDigests waits (OnQuery runs after the answer) until a digest
// whose query contains text is there, and returns it.
func rvAdminDigests(t *testing.T, s *Server, text string) *struct {
	Pool  string `json:"pool"`
	Query string `json:"query"`
	Calls int64  `json:"calls"`
	Rows  int64  `json:"rows"`
	Errs  int64  `json:"errors"`
} {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		_, body := rvAdminDo(s, http.MethodGet, "/api/stats/digests")
		var ans struct {
			Digests []struct {
				Pool  string `json:"pool"`
				Query string `json:"query"`
				Calls int64  `json:"calls"`
				Rows  int64  `json:"rows"`
				Errs  int64  `json:"errors"`
			} `json:"digests"`
		}
		if err := json.Unmarshal([]byte(body), &ans); err != nil {
			t.Fatalf("digests: %v\n%s", err, body)
		}
		for i := range ans.Digests {
			if strings.Contains(ans.Digests[i].Query, text) {
				time.Sleep(200 * time.Millisecond) // let later events of it land too
				_, body = rvAdminDo(s, http.MethodGet, "/api/stats/digests")
				json.Unmarshal([]byte(body), &ans)
				for j := range ans.Digests {
					if strings.Contains(ans.Digests[j].Query, text) {
						return &ans.Digests[j]
					}
				}
			}
		}
		if time.Now().After(deadline) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A [databases] entry with a forced user (user= in its URL) serves every
// client from the pool (database, forced user). While that pool is paused,
// a client that sent a statement is "waiting" in GET /api/clients, but GET
// /api/pools says waiting 0 and sqp_pool_waiting_clients is 0:
// waitingClients (admin.go) keys the waiting clients by the client's own
// database/user ("app/whoever"), never the pool's name ("app/postgres").
// docs/qprouter.md: "`waiting` in `GET /api/pools` and
// `sqp_pool_waiting_clients` count the clients a pause holds too".
func TestAdminReviewForcedUserPausedWaiting(t *testing.T) {
	s, addr, _ := rvAdminServe(t, func(c *Config, cl *pgtest.Cluster) {
		c.ServerURL = ""
		c.PoolMode = "transaction"
		c.Databases = map[string]string{"app": fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", cl.Port)}
	}, nil)
	ctx := context.Background()
	cn := pgxConnect(t, "postgres://whoever@"+addr+"/app?sslmode=disable")
	if _, err := cn.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if code, body := rvAdminDo(s, http.MethodPost, "/api/pause?pool=app/postgres"); code != 200 {
		t.Fatalf("pause: %d %s", code, body)
	}
	done := make(chan error, 1)
	go func() { _, err := cn.Exec(ctx, "SELECT 1"); done <- err }()
	time.Sleep(500 * time.Millisecond)
	_, clients := rvAdminDo(s, http.MethodGet, "/api/clients")
	_, pools := rvAdminDo(s, http.MethodGet, "/api/pools")
	gauge := rvAdminMetricLines(s, "sqp_pool_waiting_clients{")
	rvAdminDo(s, http.MethodPost, "/api/resume?pool=app/postgres")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var ca struct {
		Clients []struct{ State, Pool string } `json:"clients"`
	}
	var pa struct {
		Pools []struct {
			Name    string `json:"name"`
			Waiting int    `json:"waiting"`
			Paused  bool   `json:"paused"`
		} `json:"pools"`
	}
	json.Unmarshal([]byte(clients), &ca)
	json.Unmarshal([]byte(pools), &pa)
	if len(ca.Clients) != 1 || ca.Clients[0].State != "waiting" || len(pa.Pools) != 1 || !pa.Pools[0].Paused {
		t.Fatalf("setup: %s %s", clients, pools)
	}
	if pa.Pools[0].Waiting != 1 || len(gauge) != 1 || !strings.HasSuffix(gauge[0], " 1") {
		t.Errorf("a client of pool %s waits on the paused pool (GET /api/clients: state %q, pool %q), but GET /api/pools waiting = %d and %q",
			pa.Pools[0].Name, ca.Clients[0].State, ca.Clients[0].Pool, pa.Pools[0].Waiting, gauge)
	}
}

// The same forced-user entry: GET /api/clients gives each client's "pool"
// as the client's database/user ("app/whoever"), a pool that GET
// /api/pools, ?pool= of pause/resume (404) and the digests' pool never
// name; the client is served by "app/postgres".
func TestAdminReviewForcedUserClientPool(t *testing.T) {
	s, addr, _ := rvAdminServe(t, func(c *Config, cl *pgtest.Cluster) {
		c.ServerURL = ""
		c.Databases = map[string]string{"app": fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", cl.Port)}
	}, nil)
	ctx := context.Background()
	cn := pgxConnect(t, "postgres://whoever@"+addr+"/app?sslmode=disable")
	if _, err := cn.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	_, clients := rvAdminDo(s, http.MethodGet, "/api/clients")
	_, pools := rvAdminDo(s, http.MethodGet, "/api/pools")
	var ca struct {
		Clients []struct{ Pool string } `json:"clients"`
	}
	var pa struct {
		Pools []struct{ Name string } `json:"pools"`
	}
	json.Unmarshal([]byte(clients), &ca)
	json.Unmarshal([]byte(pools), &pa)
	if len(ca.Clients) != 1 || len(pa.Pools) != 1 {
		t.Fatalf("setup: %s %s", clients, pools)
	}
	if ca.Clients[0].Pool != pa.Pools[0].Name {
		code, _ := rvAdminDo(s, http.MethodPost, "/api/pause?pool="+ca.Clients[0].Pool)
		t.Errorf("GET /api/clients says the client's pool is %q, but the only pool (GET /api/pools) is %q; POST /api/pause?pool=%s answers %d",
			ca.Clients[0].Pool, pa.Pools[0].Name, ca.Clients[0].Pool, code)
	}
}

// Every database name a client makes up costs a pool, and docs/qprouter.md
// ("Unused pools") says such a pool is removed after UnusedTimeout "(its
// counters in SHOW POOLS, /api/pools and the metrics go with it)", so that
// "names clients make up cannot grow the proxy for good". The pool goes,
// but its per-pool series (sqp_pool_acquire_duration_seconds, with ~20
// buckets, sqp_query_duration_seconds, sqp_routing_decisions_total, ...)
// stay in /metrics forever: a client cycling database names grows the
// scrape and the label cardinality without bound.
func TestAdminReviewRemovedPoolSeriesStay(t *testing.T) {
	s, addr, _ := rvAdminServe(t, nil, func(s *Server) { s.pools.UnusedTimeout = 100 * time.Millisecond })
	ctx := context.Background()
	const n = 20
	for i := range n {
		url := fmt.Sprintf("postgres://postgres@%s/zzadmin_nodb%d?sslmode=disable&connect_timeout=5", addr, i)
		if cn, err := pgx.Connect(ctx, url); err == nil {
			cn.Close(ctx)
			t.Fatalf("client %d connected to a database that does not exist", i)
		}
	}
	time.Sleep(2500 * time.Millisecond) // two sweeps, a second apart
	if got := len(s.proxy.Pools()); got > 0 {
		t.Fatalf("setup: %d pools left", got)
	}
	var left []string
	for _, l := range rvAdminMetricLines(s, "sqp_") {
		if strings.Contains(l, "zzadmin_nodb") {
			left = append(left, l)
		}
	}
	if len(left) > 0 {
		t.Errorf("every pool of the %d made-up database names is removed, but /metrics still has %d series labelled with them, e.g.\n%s",
			n, len(left), strings.Join(left[:min(4, len(left))], "\n"))
	}
}

// A portal read in parts (Execute with a row limit, as JDBC's setFetchSize
// and other drivers' cursors do): 5 rows reach the client in chunks of 2.
// PostgreSQL's pg_stat_statements counts that as 1 call of 5 rows. The
// digest counts each Execute as a call: a PortalSuspended gives rows 0
// (relay.go 's') and the final CommandComplete "SELECT 1" the last chunk's
// rows only, so rows is 1 where the client got 5.
func TestAdminReviewPortalRowsCounted(t *testing.T) {
	s, addr, _ := rvAdminServe(t, nil, nil)
	got, code := rvAdminPortal(t, addr, "SELECT g AS zzadmin_portal FROM generate_series(1, 5) g")
	if got != 5 || code != "" {
		t.Fatalf("setup: %d rows, error %q", got, code)
	}
	d := rvAdminDigests(t, s, "zzadmin_portal")
	if d == nil {
		t.Fatal("no digest")
	}
	if d.Rows != 5 || d.Calls != 1 {
		t.Errorf("one statement returned 5 rows to the client (in 3 Executes of 2 rows), but its digest says calls %d, rows %d (want 1 and 5, as pg_stat_statements)",
			d.Calls, d.Rows)
	}
}

// A portal read in parts whose statement fails in a later part (a
// division by zero at the third row, after the first Execute sent two
// rows): one call, one error, and the two rows the client got. Before
// 2026-12-06 the error's event carried 0 rows (the note's "suspended
// portal that then fails loses its rows").
func TestAdminReviewPortalRowsKeptOnError(t *testing.T) {
	s, addr, _ := rvAdminServe(t, nil, nil)
	got, code := rvAdminPortal(t, addr, "SELECT 1 / (3 - g) AS zzadmin_portal_fails FROM generate_series(1, 5) g")
	if got != 2 || code != "22012" {
		t.Fatalf("setup: %d rows, error %q", got, code)
	}
	d := rvAdminDigests(t, s, "zzadmin_portal_fails")
	if d == nil {
		t.Fatal("no digest")
	}
	if d.Calls != 1 || d.Errs != 1 || d.Rows != 2 {
		t.Errorf("one statement sent 2 rows, then failed: its digest says calls %d, errors %d, rows %d (want 1, 1, 2)", d.Calls, d.Errs, d.Rows)
	}
}

// rvAdminPortal runs q through the proxy at addr as one portal read by
// three Executes of at most 2 rows, and returns the rows the client got
// and the SQLSTATE of an error ("" for none).
func rvAdminPortal(t *testing.T, addr, q string) (rows int, code string) {
	t.Helper()
	pc := pgconnConnect(t, "postgres://postgres@"+addr+"/postgres?sslmode=disable")
	msgs := []pgproto3.FrontendMessage{&pgproto3.Parse{Query: q}, &pgproto3.Bind{}}
	for range 3 {
		msgs = append(msgs, &pgproto3.Execute{MaxRows: 2})
	}
	a := extRun(t, pc, msgs...)
	return a.rows, a.code
}

// A statement that fails is counted in sqp_query_errors_total and its
// digest's errors when it comes by the simple protocol, but not at all
// when the same statement comes by the extended protocol (every Go, Java,
// .NET driver) and fails at Parse (42P01, a syntax error) or Bind (22P02
// for a bad parameter): relay.go's 'E' makes an event for kQuery and
// kExecute only.
func TestAdminReviewExtendedErrorsCounted(t *testing.T) {
	s, addr, _ := rvAdminServe(t, nil, nil)
	ctx := context.Background()
	pc := pgconnConnect(t, "postgres://postgres@"+addr+"/postgres?sslmode=disable")
	if _, err := pc.Exec(ctx, "SELECT * FROM zzadmin_missing_simple").ReadAll(); err == nil {
		t.Fatal("no error")
	}
	if err := pc.ExecParams(ctx, "SELECT * FROM zzadmin_missing_ext", nil, nil, nil, nil).Read().Err; err == nil {
		t.Fatal("no error")
	}
	if err := pc.ExecParams(ctx, "SELECT $1::int AS zzadmin_badparam", [][]byte{[]byte("abc")}, nil, nil, nil).Read().Err; err == nil {
		t.Fatal("no error")
	}
	if d := rvAdminDigests(t, s, "zzadmin_missing_simple"); d == nil || d.Errs != 1 {
		t.Fatalf("setup: simple protocol digest %+v", d)
	}
	ext, bad := rvAdminDigests(t, s, "zzadmin_missing_ext"), rvAdminDigests(t, s, "zzadmin_badparam")
	errs := rvAdminMetricLines(s, "sqp_query_errors_total{")
	if ext == nil || ext.Errs != 1 || bad == nil || bad.Errs != 1 || len(errs) != 1 || !strings.HasSuffix(errs[0], " 3") {
		t.Errorf("three statements failed (42P01 by Query, 42P01 at Parse, 22P02 at Bind), but the digests of the extended-protocol ones are %+v and %+v and %q",
			ext, bad, errs)
	}
}

// In session mode (the default) the proxy keeps no table of the client's
// named statements (plan.go 'B': a portal's text is recorded only for the
// unnamed statement, or a named one when s.rename), so an Execute of a
// named prepared statement (pgx's default, JDBC after prepareThreshold,
// Npgsql's auto-prepare) is observed with the text of whatever portal
// was bound before: "" (the portals are cleared at each idle
// ReadyForQuery), or, inside a transaction, the last unnamed statement.
// Every named statement of every client then lands in one shape with an
// empty query.
func TestAdminReviewSessionNamedStatementText(t *testing.T) {
	s, addr, _ := rvAdminServe(t, nil, nil)
	ctx := context.Background()
	pc := pgconnConnect(t, "postgres://postgres@"+addr+"/postgres?sslmode=disable")
	if err := pc.ExecParams(ctx, "SELECT 1 AS zzadmin_unnamed", nil, nil, nil, nil).Read().Err; err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Prepare(ctx, "s1", "SELECT 2 AS zzadmin_named", nil); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := pc.ExecPrepared(ctx, "s1", nil, nil, nil).Read().Err; err != nil {
			t.Fatal(err)
		}
	}
	named := rvAdminDigests(t, s, "zzadmin_named")
	unnamed := rvAdminDigests(t, s, "zzadmin_unnamed")
	if named == nil || named.Calls != 3 || unnamed == nil || unnamed.Calls != 1 {
		_, body := rvAdminDo(s, http.MethodGet, "/api/stats/digests")
		t.Errorf("ran SELECT 1 AS zzadmin_unnamed once and prepared statement s1 (SELECT 2 AS zzadmin_named) 3 times, but the digests are named %+v, unnamed %+v:\n%s",
			named, unnamed, body)
	}
}
