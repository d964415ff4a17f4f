// Handler tests through httptest: JSON shapes, 501 for absent callbacks, metric names in /metrics.

package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

func do(t *testing.T, h http.Handler, method, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func decode(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, body)
	}
	if m["version"] != float64(APIVersion) {
		t.Errorf("version %v, want %d", m["version"], APIVersion)
	}
	return m
}

func TestAbsentCallbacks(t *testing.T) {
	s := New(Options{})
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/pools"}, {"GET", "/api/clients"},
		{"POST", "/api/pause"}, {"POST", "/api/resume"}, {"POST", "/api/reload"},
	} {
		code, body := do(t, s, c.method, c.path)
		if code != http.StatusNotImplemented {
			t.Errorf("%s %s: %d, want 501", c.method, c.path, code)
		}
		if m := decode(t, body); m["error"] == "" || m["ok"] != false {
			t.Errorf("%s %s: %s", c.method, c.path, body)
		}
	}
	if code, body := do(t, s, "GET", "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("healthz: %d %q", code, body)
	}
	if code, _ := do(t, s, "GET", "/api/pause"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /api/pause: %d, want 405", code)
	}
}

func TestDigestsEndpoint(t *testing.T) {
	s := New(Options{Now: func() time.Time { return time.Unix(0, 0).UTC() }})
	for i := range 30 {
		s.ObserveQuery("main", "primary", fmt.Sprintf("SELECT * FROM t WHERE id = %d", i), time.Millisecond, 1, "")
	}
	s.ObserveQuery("main", "primary", "UPDATE t SET x = 1 WHERE id = 2", 50*time.Millisecond, 1, "40001")
	s.ObserveQuery("etl", "primary", "select 1", time.Microsecond, 1, "")

	code, body := do(t, s, "GET", "/api/stats/digests")
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var ans DigestsAnswer
	if err := json.Unmarshal([]byte(body), &ans); err != nil {
		t.Fatal(err)
	}
	if ans.Summary.Shapes != 3 || len(ans.Digests) != 3 {
		t.Fatalf("%d shapes: %s", len(ans.Digests), body)
	}
	top := ans.Digests[0]
	if top.Query != "update t set x = $1 where id = $2" || top.Errors != 1 || top.TotalNs != int64(50*time.Millisecond) {
		t.Errorf("top shape %+v", top)
	}
	if ans.Digests[1].Calls != 30 || ans.Digests[1].Query != "select * from t where id = $1" {
		t.Errorf("second shape %+v", ans.Digests[1])
	}
	// Field names, as clients see them.
	m := decode(t, body)
	d0 := m["digests"].([]any)[0].(map[string]any)
	for _, k := range []string{"fingerprint", "pool", "route", "query", "calls", "errors", "rows", "total_ns",
		"mean_ns", "min_ns", "max_ns", "p50_ns", "p99_ns", "first_seen", "last_seen", "warnings"} {
		if _, ok := d0[k]; !ok {
			t.Errorf("digest has no %q: %v", k, d0)
		}
	}
	for _, k := range []string{"shapes", "max_shapes", "evicted", "since"} {
		if _, ok := m["summary"].(map[string]any)[k]; !ok {
			t.Errorf("summary has no %q", k)
		}
	}

	if _, body := do(t, s, "GET", "/api/stats/digests?limit=1"); len(decode(t, body)["digests"].([]any)) != 1 {
		t.Errorf("limit=1: %s", body)
	}
	if _, body := do(t, s, "GET", "/api/stats/digests?pool=etl"); len(decode(t, body)["digests"].([]any)) != 1 {
		t.Errorf("pool=etl: %s", body)
	}
	if code, _ := do(t, s, "GET", "/api/stats/digests?limit=x"); code != 400 {
		t.Errorf("limit=x: %d, want 400", code)
	}
	if code, body := do(t, s, "POST", "/api/stats/digests/reset"); code != 200 || decode(t, body)["ok"] != true {
		t.Errorf("reset: %d %s", code, body)
	}
	if _, body := do(t, s, "GET", "/api/stats/digests"); len(decode(t, body)["digests"].([]any)) != 0 {
		t.Errorf("after reset: %s", body)
	}
}

func TestCallbacks(t *testing.T) {
	var paused []string
	reloads := 0
	s := New(Options{
		Pools: func() []PoolStat {
			return []PoolStat{{Name: "main", Database: "db", User: "u", Mode: "transaction", Active: 3, Idle: 2, Waiting: 1, MaxSize: 10}}
		},
		Clients: func() []ClientStat {
			return []ClientStat{{ID: "c1", Pool: "main", User: "u", Database: "db", Addr: "10.0.0.1:5000", State: "idle"}}
		},
		Pause: func(ctx context.Context, pool string) error {
			if pool == "nope" {
				return fmt.Errorf("pool %q: %w", pool, ErrUnknownPool)
			}
			paused = append(paused, pool)
			return nil
		},
		Resume: func(ctx context.Context, pool string) error { return errors.New("boom") },
		Reload: func(ctx context.Context) error { reloads++; return nil },
		Health: func() error { return errors.New("draining") },
	})
	code, body := do(t, s, "GET", "/api/pools")
	pools := decode(t, body)["pools"].([]any)
	if code != 200 || len(pools) != 1 {
		t.Fatalf("%d %s", code, body)
	}
	p := pools[0].(map[string]any)
	for k, v := range map[string]any{"name": "main", "mode": "transaction", "active": 3.0, "idle": 2.0, "waiting": 1.0, "max_size": 10.0, "paused": false} {
		if p[k] != v {
			t.Errorf("pool %s = %v, want %v", k, p[k], v)
		}
	}
	code, body = do(t, s, "GET", "/api/clients")
	if c := decode(t, body)["clients"].([]any); code != 200 || len(c) != 1 || c[0].(map[string]any)["addr"] != "10.0.0.1:5000" {
		t.Errorf("clients: %d %s", code, body)
	}
	if code, _ := do(t, s, "POST", "/api/pause?pool=main"); code != 200 {
		t.Errorf("pause main: %d", code)
	}
	if code, _ := do(t, s, "POST", "/api/pause"); code != 200 {
		t.Errorf("pause all: %d", code)
	}
	if code, _ := do(t, s, "POST", "/api/pause?pool=nope"); code != 404 {
		t.Errorf("pause unknown pool: %d, want 404", code)
	}
	if fmt.Sprint(paused) != "[main ]" {
		t.Errorf("paused %q", paused)
	}
	if code, body := do(t, s, "POST", "/api/resume"); code != 500 || !strings.Contains(decode(t, body)["error"].(string), "boom") {
		t.Errorf("resume: %d %s", code, body)
	}
	if code, _ := do(t, s, "POST", "/api/reload"); code != 200 || reloads != 1 {
		t.Errorf("reload: %d, %d reloads", code, reloads)
	}
	if code, body := do(t, s, "GET", "/healthz"); code != 503 || !strings.Contains(body, "draining") {
		t.Errorf("healthz: %d %q", code, body)
	}
}

func TestMetrics(t *testing.T) {
	s := New(Options{Pools: func() []PoolStat {
		return []PoolStat{{Name: "main", Active: 3, Idle: 2, Waiting: 1, MaxSize: 10, Paused: true},
			{Name: "app/bob", Database: "app", User: "bob", DBConnections: 4, MaxDBConnections: 6, UserConnections: 2,
				DBClients: 5, MaxDBClients: 9, UserClients: 3},
			{Name: "app/eve", Database: "app", User: "eve", DBConnections: 4, MaxDBConnections: 6, UserConnections: 2, MaxUserConnections: 3,
				DBClients: 5, MaxDBClients: 9, UserClients: 2, MaxUserClients: 4}}
	}, FenceWaits: func() int64 { return 17 }, CancelledWaits: func() int64 { return 5 }, LoopHandBacks: func() map[string]int64 { return map[string]int64{"message": 3, "server": 0} }})
	s.ObserveQuery("main", "primary", "select 1", 2*time.Millisecond, 1, "")
	s.ObserveQuery("main", "primary", "select 1", 2*time.Millisecond, 0, "57014")
	s.ObserveAcquire("main", 30*time.Microsecond)
	s.RoutingDecision("main", "primary")
	s.RoutingDecision("main", "primary")
	s.CacheOp(CacheHit)
	s.CacheOp(CacheMiss)
	s.CacheOp(CacheEvict)
	s.AddBytes(FromClient, 100)
	s.AddBytes(ToClient, 4000)
	toServer := s.Bytes(ToServer)
	toServer(7)
	toServer(8)
	s.SettingsReplay()
	s.SettingsReplay()
	s.ClientConnected()
	s.ClientConnected()
	s.ClientDisconnected()

	code, body := do(t, s, "GET", "/metrics")
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	for _, want := range []string{
		`sqp_query_duration_seconds_bucket{pool="main",le="0.0025"} 2`,
		`sqp_query_duration_seconds_count{pool="main"} 2`,
		`sqp_query_errors_total{pool="main"} 1`,
		`sqp_pool_acquire_duration_seconds_count{pool="main"} 1`,
		`sqp_routing_decisions_total{pool="main",route="primary"} 2`,
		`sqp_fence_waits_total 17`,
		`sqp_cancelled_waits_total 5`,
		`sqp_loop_handbacks_total{reason="message"} 3`,
		`sqp_loop_handbacks_total{reason="server"} 0`,
		`sqp_routing_cache_operations_total{op="hit"} 1`,
		`sqp_routing_cache_operations_total{op="miss"} 1`,
		`sqp_routing_cache_operations_total{op="evict"} 1`,
		`sqp_bytes_total{direction="from_client"} 100`,
		`sqp_bytes_total{direction="to_client"} 4000`,
		`sqp_bytes_total{direction="to_server"} 15`,
		`sqp_settings_replays_total 2`,
		`sqp_client_connections 1`,
		`sqp_pool_connections{pool="main",state="active"} 3`,
		`sqp_pool_connections{pool="main",state="idle"} 2`,
		`sqp_pool_waiting_clients{pool="main"} 1`,
		`sqp_pool_max_connections{pool="main"} 10`,
		`sqp_pool_paused{pool="main"} 1`,
		`sqp_database_server_connections{database="app"} 4`,
		`sqp_database_max_server_connections{database="app"} 6`,
		`sqp_user_server_connections{user="bob"} 2`,
		`sqp_user_max_server_connections{user="eve"} 3`,
		`sqp_database_clients{database="app"} 5`,
		`sqp_database_max_clients{database="app"} 9`,
		`sqp_user_clients{user="bob"} 3`,
		`sqp_user_clients{user="eve"} 2`,
		`sqp_user_max_clients{user="eve"} 4`,
		`sqp_digest_shapes 1`,
		`sqp_digest_evictions_total 0`,
		`go_goroutines `,
	} {
		if !strings.Contains(body, want+"\n") && !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, `sqp_user_max_server_connections{user="bob"}`) || strings.Contains(body, `sqp_user_max_clients{user="bob"}`) {
		t.Error("a cap of 0 (none) exported")
	}
}

// TestHotPathAllocations checks the documented promise: no allocation per
// call for pools, routes, ops and directions seen before.
func TestHotPathAllocations(t *testing.T) {
	s := New(Options{})
	warm := func() {
		s.ObserveAcquire("main", time.Millisecond)
		s.RoutingDecision("main", "primary")
		s.CacheOp(CacheHit)
		s.AddBytes(ToServer, 10)
		s.ObserveQuery("main", "primary", "select abalance from pgbench_accounts where aid = 1", time.Millisecond, 1, "")
	}
	warm()
	if n := testing.AllocsPerRun(200, warm); n != 0 {
		t.Errorf("%v allocations per round of hot-path calls, want 0", n)
	}
}

func BenchmarkHotPath(b *testing.B) {
	s := New(Options{})
	b.Run("ObserveQuery", func(b *testing.B) {
		b.ReportAllocs()
		loop(b, func() {
			s.ObserveQuery("main", "primary", "SELECT abalance FROM pgbench_accounts WHERE aid = 81714;", time.Millisecond, 1, "")
		})
	})
	b.Run("ObserveAcquire", func(b *testing.B) {
		b.ReportAllocs()
		loop(b, func() { s.ObserveAcquire("main", time.Millisecond) })
	})
	b.Run("RoutingDecision", func(b *testing.B) {
		b.ReportAllocs()
		loop(b, func() { s.RoutingDecision("main", "primary") })
	})
	b.Run("CacheOp", func(b *testing.B) {
		b.ReportAllocs()
		loop(b, func() { s.CacheOp(CacheHit) })
	})
	b.Run("AddBytes", func(b *testing.B) {
		b.ReportAllocs()
		loop(b, func() { s.AddBytes(ToClient, 100) })
	})
	b.Run("Bytes", func(b *testing.B) {
		b.ReportAllocs()
		add := s.Bytes(ToClient)
		loop(b, func() { add(100) })
	})
}

// loop runs f in b.Loop on a locked OS thread and also reports the thread's
// CPU time per call (cpu-ns/op, Linux only): on a shared machine ns/op
// includes the time other processes held the CPU, cpu-ns/op does not (nor
// does it include the garbage collector's background workers).
func loop(b *testing.B, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, n := threadCPU(), 0
	for b.Loop() {
		f()
		n++
	}
	if haveThreadCPU && n > 0 {
		b.ReportMetric(float64(threadCPU()-t0)/float64(n), "cpu-ns/op")
	}
}

// The runtime profiles are served only when asked for.
func TestPprof(t *testing.T) {
	if code, _ := do(t, New(Options{}), "GET", "/debug/pprof/"); code != http.StatusNotFound {
		t.Errorf("without Pprof: GET /debug/pprof/ answered %d, want 404", code)
	}
	s := New(Options{Pprof: true})
	code, body := do(t, s, "GET", "/debug/pprof/")
	if code != 200 || !strings.Contains(body, "goroutine") {
		t.Errorf("with Pprof: GET /debug/pprof/: %d %.200q", code, body)
	}
	if code, body := do(t, s, "GET", "/debug/pprof/goroutine?debug=1"); code != 200 || !strings.Contains(body, "TestPprof") {
		t.Errorf("with Pprof: goroutine profile: %d %.200q", code, body)
	}
	if code, _ := do(t, s, "GET", "/healthz"); code != 200 {
		t.Errorf("with Pprof: healthz %d", code)
	}
}
