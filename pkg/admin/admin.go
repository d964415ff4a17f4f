// Package admin is qprouter's admin HTTP API and Prometheus metrics, over
// callbacks the proxy's wiring supplies; it does not import the proxy.
//
// A Server is an http.Handler:
//
//	GET  /api/stats/digests        per-shape statistics, sorted by total time (?limit=N, ?pool=P)
//	POST /api/stats/digests/reset  forget every shape
//	GET  /api/pools                Options.Pools
//	GET  /api/clients              Options.Clients
//	POST /api/pause                Options.Pause  (?pool=P; no pool: every pool)
//	POST /api/resume               Options.Resume (?pool=P; no pool: every pool)
//	POST /api/reload               Options.Reload
//	GET  /healthz                  200 "ok", or 503 with Options.Health's error
//	GET  /metrics                  Prometheus text format from the Server's own registry
//
// Every JSON answer is one object with "version": 1; errors are
// {"version": 1, "error": "..."}. An endpoint whose callback is nil answers
// 501 Not Implemented; a callback error wrapping ErrUnknownPool answers 404,
// any other error 500.
//
// The hot path is the Observe methods. They do not allocate for a pool,
// route, cache op or byte direction seen before: the label children are
// cached in copy-on-write maps, so the number of distinct pools and routes
// must stay bounded (they come from the configuration). ObserveQuery also
// normalizes the statement (package digest, about a microsecond) and
// updates the shape's statistics under one mutex.
package admin

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/qpkit/qpkit/pkg/digest"
)

// ErrUnknownPool is what Pause and Resume callbacks wrap when the named pool
// does not exist; the API answers 404.
var ErrUnknownPool = errors.New("unknown pool")

// ErrUnavailable is what a callback wraps when the proxy cannot do it now
// (a pause while shutting down); the API answers 503.
var ErrUnavailable = errors.New("unavailable")

// Options configure a Server. Every field is optional.
type Options struct {
	// Digests holds the per-shape statistics. Nil: a new store of
	// digest.DefaultMaxShapes shapes.
	Digests *digest.Store

	// Pools lists the pools; it is called for GET /api/pools and at every
	// scrape of /metrics for the pool gauges, so it must be cheap. Nil:
	// /api/pools answers 501 and no pool gauges are exported.
	Pools func() []PoolStat

	// Clients lists the connected clients for GET /api/clients. Nil: 501.
	Clients func() []ClientStat

	// Databases lists where each database is served, for GET
	// /api/databases. Nil: 501.
	Databases func() []DatabaseStat

	// Pause stops handing server connections to clients of pool ("" means
	// every pool) once the running transactions finish; Resume undoes it.
	// Nil: 501.
	Pause  func(ctx context.Context, pool string) error
	Resume func(ctx context.Context, pool string) error

	// Reload rereads the configuration. Nil: 501.
	Reload func(ctx context.Context) error

	// FenceWaits counts the pipelined client messages held until earlier
	// answers came (sqp_fence_waits_total). Nil: not exported.
	FenceWaits func() int64

	// CancelledWaits counts the waits for a server connection that a
	// cancel request ended (sqp_cancelled_waits_total). Nil: not exported.
	CancelledWaits func() int64

	// LoopHandBacks counts, per reason, the sessions the event loop handed
	// back to their goroutines (sqp_loop_handbacks_total). Nil: not
	// exported.
	LoopHandBacks func() map[string]int64

	// Health reports whether the proxy is serving. Nil: always healthy.
	Health func() error

	// QueryBuckets and AcquireBuckets are the histogram upper bounds in
	// seconds. Nil: DefaultQueryBuckets and DefaultAcquireBuckets.
	QueryBuckets   []float64
	AcquireBuckets []float64

	// Now is the clock for the JSON answers' "time". Nil: time.Now.
	Now func() time.Time

	// Pprof adds net/http/pprof's handlers under /debug/pprof/, for
	// profiling a running proxy (off by default: a profile costs CPU
	// and shows internals).
	Pprof bool
}

// Histogram bounds in seconds: queries from 100 µs to 30 s, pool acquires
// from 10 µs (an idle connection) to 10 s (an acquire timeout).
var (
	DefaultQueryBuckets   = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	DefaultAcquireBuckets = []float64{.00001, .000025, .00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
)

// DatabaseStat is one database entry (PgBouncer's SHOW DATABASES): the
// server a client database name is served by.
type DatabaseStat struct {
	Name      string   `json:"name"`                 // the client's database name; "*": every other one
	Server    string   `json:"server"`               // the URL, password hidden
	Hosts     []string `json:"hosts"`                // host:port (or socket directory:port), in the URL's order
	Database  string   `json:"database,omitempty"`   // the database there ("": the client's name)
	ForceUser string   `json:"force_user,omitempty"` // every client served as this user
	// LoadBalanceHosts is "round-robin" or "disable" (hosts in order).
	LoadBalanceHosts string `json:"load_balance_hosts"`
	ConnectQuery     string `json:"connect_query,omitempty"`
}

// PoolStat is one pool as the proxy reports it.
type PoolStat struct {
	Name     string `json:"name"`
	Database string `json:"database"`
	User     string `json:"user"`
	Mode     string `json:"mode"`     // "session" or "transaction"
	Active   int    `json:"active"`   // server connections lent to clients
	Idle     int    `json:"idle"`     // server connections in the pool
	Waiting  int    `json:"waiting"`  // clients waiting for a server connection
	MaxSize  int    `json:"max_size"` // the pool's size limit; 0 when unknown
	Paused   bool   `json:"paused"`
	// Reserve is how many more connections may open for a client that
	// waited reserve_pool_timeout; the other fields count the server
	// connections of the pool's database and of its user, all pools
	// together, with their caps (0: none).
	Reserve            int `json:"reserve_size"`
	DBConnections      int `json:"db_connections"`
	MaxDBConnections   int `json:"max_db_connections"`
	UserConnections    int `json:"user_connections"`
	MaxUserConnections int `json:"max_user_connections"`
	// The clients of the database and of the user, all pools together,
	// with their caps (0: none).
	DBClients      int `json:"db_clients"`
	MaxDBClients   int `json:"max_db_client_connections"`
	UserClients    int `json:"user_clients"`
	MaxUserClients int `json:"max_user_client_connections"`
}

// ClientStat is one client connection as the proxy reports it.
type ClientStat struct {
	ID          string    `json:"id"`
	Pool        string    `json:"pool"`
	User        string    `json:"user"`
	Database    string    `json:"database"`
	Application string    `json:"application_name"`
	Addr        string    `json:"addr"`  // the client's remote address
	State       string    `json:"state"` // e.g. "idle", "active", "waiting"
	TLS         bool      `json:"tls"`
	Pinned      bool      `json:"pinned"` // holds its server connection until it disconnects
	ConnectedAt time.Time `json:"connected_at"`
}

// Server is the admin API and metrics of one proxy. Build it with New.
type Server struct {
	opts    Options
	store   *digest.Store
	metrics *metrics
	mux     *http.ServeMux
}

// New returns a Server for opts.
func New(opts Options) *Server {
	if opts.Digests == nil {
		opts.Digests = digest.NewStore(0)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.QueryBuckets == nil {
		opts.QueryBuckets = DefaultQueryBuckets
	}
	if opts.AcquireBuckets == nil {
		opts.AcquireBuckets = DefaultAcquireBuckets
	}
	s := &Server{opts: opts, store: opts.Digests}
	s.metrics = newMetrics(&s.opts)
	s.mux = s.routes()
	return s
}

// Digests returns the server's shape store.
func (s *Server) Digests() *digest.Store { return s.store }

// Registry returns the server's own Prometheus registry, to register more
// collectors (the Go and process collectors are already there).
func (s *Server) Registry() *prometheus.Registry { return s.metrics.reg }

// ServeHTTP serves the admin API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }
