// The HTTP routes of the admin API and their JSON answers.

package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/qpkit/qpkit/pkg/digest"
)

// APIVersion is the "version" of every JSON answer; it changes when a field
// changes meaning or disappears, not when one is added.
const APIVersion = 1

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	api := []struct {
		method, path string
		h            http.HandlerFunc
	}{
		{http.MethodGet, "/api/stats/digests", s.digests},
		{http.MethodPost, "/api/stats/digests/reset", s.resetDigests},
		{http.MethodGet, "/api/pools", s.pools},
		{http.MethodGet, "/api/clients", s.clients},
		{http.MethodGet, "/api/databases", s.databases},
		{http.MethodPost, "/api/pause", s.poolAction(s.opts.Pause, "pause")},
		{http.MethodPost, "/api/resume", s.poolAction(s.opts.Resume, "resume")},
		{http.MethodPost, "/api/reload", s.reload},
	}
	for _, a := range api {
		mux.HandleFunc(a.method+" "+a.path, a.h)
		// Any other method gets the API's JSON error, not net/http's
		// text: a client parses every /api answer as JSON.
		allow := a.method
		if allow == http.MethodGet {
			allow += ", " + http.MethodHead
		}
		mux.HandleFunc(a.path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			s.fail(w, http.StatusMethodNotAllowed, r.Method+" "+a.path+" is not allowed; use "+a.method)
		})
	}
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, http.StatusNotFound, "no such API path: "+r.URL.Path)
	})
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	if s.opts.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// DigestsAnswer is the JSON of GET /api/stats/digests.
type DigestsAnswer struct {
	Version int            `json:"version"`
	Time    time.Time      `json:"time"`
	Summary digest.Summary `json:"summary"`
	Digests []digest.Shape `json:"digests"` // by total time, largest first
}

func (s *Server) digests(w http.ResponseWriter, r *http.Request) {
	limit := 0
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			s.fail(w, http.StatusBadRequest, "limit must be a non-negative integer, not "+strconv.Quote(v))
			return
		}
		limit = n
	}
	shapes, sum := s.store.Snapshot()
	if pool := r.URL.Query().Get("pool"); pool != "" {
		kept := shapes[:0]
		for _, sh := range shapes {
			if sh.Pool == pool {
				kept = append(kept, sh)
			}
		}
		shapes = kept
	}
	if limit > 0 && len(shapes) > limit {
		shapes = shapes[:limit]
	}
	s.answer(w, http.StatusOK, DigestsAnswer{Version: APIVersion, Time: s.opts.Now(), Summary: sum, Digests: shapes})
}

func (s *Server) resetDigests(w http.ResponseWriter, r *http.Request) {
	s.store.Reset()
	s.ok(w)
}

// PoolsAnswer is the JSON of GET /api/pools.
type PoolsAnswer struct {
	Version int        `json:"version"`
	Time    time.Time  `json:"time"`
	Pools   []PoolStat `json:"pools"`
}

func (s *Server) pools(w http.ResponseWriter, r *http.Request) {
	listed(s, w, "pools", s.opts.Pools, func(ps []PoolStat) any {
		return PoolsAnswer{Version: APIVersion, Time: s.opts.Now(), Pools: ps}
	})
}

// listed answers a GET of a list: 501 without its callback, an empty
// list rather than null.
func listed[T any](s *Server, w http.ResponseWriter, name string, list func() []T, answer func([]T) any) {
	if list == nil {
		s.notImplemented(w, name)
		return
	}
	l := list()
	if l == nil {
		l = []T{}
	}
	s.answer(w, http.StatusOK, answer(l))
}

// ClientsAnswer is the JSON of GET /api/clients.
type ClientsAnswer struct {
	Version int          `json:"version"`
	Time    time.Time    `json:"time"`
	Clients []ClientStat `json:"clients"`
}

func (s *Server) clients(w http.ResponseWriter, r *http.Request) {
	listed(s, w, "clients", s.opts.Clients, func(cs []ClientStat) any {
		return ClientsAnswer{Version: APIVersion, Time: s.opts.Now(), Clients: cs}
	})
}

// DatabasesAnswer is the JSON of GET /api/databases.
type DatabasesAnswer struct {
	Version   int            `json:"version"`
	Time      time.Time      `json:"time"`
	Databases []DatabaseStat `json:"databases"`
}

func (s *Server) databases(w http.ResponseWriter, r *http.Request) {
	listed(s, w, "databases", s.opts.Databases, func(ds []DatabaseStat) any {
		return DatabasesAnswer{Version: APIVersion, Time: s.opts.Now(), Databases: ds}
	})
}

func (s *Server) poolAction(f func(context.Context, string) error, name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if f == nil {
			s.notImplemented(w, name)
			return
		}
		if err := f(r.Context(), r.URL.Query().Get("pool")); err != nil {
			s.callbackError(w, name, err)
			return
		}
		s.ok(w)
	}
}

func (s *Server) reload(w http.ResponseWriter, r *http.Request) {
	if s.opts.Reload == nil {
		s.notImplemented(w, "reload")
		return
	}
	if err := s.opts.Reload(r.Context()); err != nil {
		s.callbackError(w, "reload", err)
		return
	}
	s.ok(w)
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if s.opts.Health != nil {
		if err := s.opts.Health(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(err.Error() + "\n"))
			return
		}
	}
	w.Write([]byte("ok\n"))
}

// Answer is the JSON of the POST endpoints and of every error.
type Answer struct {
	Version int    `json:"version"`
	OK      bool   `json:"ok"`
	Error   string `json:"error,omitempty"`
}

func (s *Server) ok(w http.ResponseWriter) {
	s.answer(w, http.StatusOK, Answer{Version: APIVersion, OK: true})
}

func (s *Server) fail(w http.ResponseWriter, code int, msg string) {
	s.answer(w, code, Answer{Version: APIVersion, Error: msg})
}

func (s *Server) notImplemented(w http.ResponseWriter, name string) {
	s.fail(w, http.StatusNotImplemented, name+" is not available in this proxy")
}

func (s *Server) callbackError(w http.ResponseWriter, name string, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, ErrUnknownPool) {
		code = http.StatusNotFound
	}
	if errors.Is(err, ErrUnavailable) {
		code = http.StatusServiceUnavailable
	}
	s.fail(w, code, name+": "+err.Error())
}

func (s *Server) answer(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v) // a write error means the client went away
}
