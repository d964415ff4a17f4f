// Review of pkg/admin: findings proven by failing tests (TestAdminReview*).

package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A database or user name is whatever bytes a client's startup packet
// holds; PostgreSQL answers a name that is not UTF-8 with an ordinary
// FATAL (3D000 "database ... does not exist", or the database when a
// LATIN1 cluster has one of that name). The Server uses the pool name
// as a Prometheus label value, and client_golang refuses label values that
// are not valid UTF-8: ObserveAcquire/ObserveQuery panic (in the proxy,
// the client's session dies with XX000 "internal error"), and every scrape
// of /metrics answers 500 while such a pool is listed, so one client
// blanks the monitoring of every pool.
func TestAdminReviewNonUTF8PoolName(t *testing.T) {
	bad := "caf\xe9/postgres"
	s := New(Options{Pools: func() []PoolStat {
		return []PoolStat{
			{Name: "postgres/postgres", Database: "postgres", User: "postgres", Active: 1},
			{Name: bad, Database: "caf\xe9", User: "postgres"},
		}
	}})
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("ObserveAcquire/ObserveQuery of pool %q panicked: %v", bad, r)
			}
		}()
		s.ObserveAcquire(bad, time.Millisecond)
		s.ObserveQuery(bad, "primary", "select 1", time.Millisecond, 1, "")
	}()
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if w.Code != http.StatusOK {
		t.Errorf("GET /metrics with a pool named %q: %d, want 200\n%.300s", bad, w.Code, w.Body.String())
	}
	if !strings.Contains(w.Body.String(), `sqp_pool_connections{pool="postgres/postgres",state="active"} 1`) {
		t.Errorf("GET /metrics lost the other pools' series:\n%.300s", w.Body.String())
	}
}

// docs/qprouter.md ("Digests, metrics and admin API"): "JSON answers are
// one object with "version": 1; errors are {"version": 1, "ok": false,
// "error": "..."}". A wrong method on an API path (GET /api/pause, POST
// /api/pools) or an unknown /api path gets net/http's plain-text
// "Method Not Allowed" / "404 page not found" instead.
func TestAdminReviewErrorsAreJSON(t *testing.T) {
	s := New(Options{
		Pools: func() []PoolStat { return nil },
		Pause: func(context.Context, string) error { return nil },
	})
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/api/pause"},
		{http.MethodPost, "/api/pools"},
		{http.MethodGet, "/api/stats/digests/reset"},
		{http.MethodGet, "/api/nosuch"},
	} {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(c.method, c.path, nil))
		var a struct {
			Version int    `json:"version"`
			OK      *bool  `json:"ok"`
			Error   string `json:"error"`
		}
		err := json.Unmarshal(w.Body.Bytes(), &a)
		if w.Code < 400 || err != nil || a.Version != 1 || a.OK == nil || *a.OK || a.Error == "" {
			t.Errorf("%s %s: %d %s %q, want a 4xx {\"version\": 1, \"ok\": false, \"error\": ...}",
				c.method, c.path, w.Code, w.Header().Get("Content-Type"), w.Body.String())
		}
	}
}
