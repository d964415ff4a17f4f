// Prometheus metrics: the hot-path Observe methods with cached label children, and the scrape-time pool collector.

package admin

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/qpkit/qpkit/pkg/digest"
)

// Cache operations for CacheOp: the per-server prepared-statement LRU.
const (
	CacheHit   = "hit"
	CacheMiss  = "miss"
	CacheEvict = "evict"
)

// Byte directions for AddBytes, seen from the proxy.
const (
	FromClient = "from_client" // read from clients
	ToClient   = "to_client"   // written to clients
	FromServer = "from_server" // read from servers
	ToServer   = "to_server"   // written to servers
)

type poolChildren struct {
	query, acquire prometheus.Observer
	errors         prometheus.Counter
}

type routeKey struct{ pool, route string }

type metrics struct {
	reg *prometheus.Registry

	query    *prometheus.HistogramVec
	acquire  *prometheus.HistogramVec
	errors   *prometheus.CounterVec
	routing  *prometheus.CounterVec
	cacheOps *prometheus.CounterVec
	bytes    *prometheus.CounterVec
	replays  prometheus.Counter

	clients atomic.Int64

	// Copy-on-write caches of label children; mu serializes writers.
	mu      sync.Mutex
	pools   atomic.Pointer[map[string]*poolChildren]
	routes  atomic.Pointer[map[routeKey]prometheus.Counter]
	cacheBy atomic.Pointer[map[string]prometheus.Counter]
	bytesBy atomic.Pointer[map[string]prometheus.Counter]
}

func newMetrics(o *Options) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.query = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "sqp_query_duration_seconds",
		Help:    "Time from a statement's arrival from the client to the server's completion of it, per pool.",
		Buckets: o.QueryBuckets,
	}, []string{"pool"})
	m.acquire = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "sqp_pool_acquire_duration_seconds",
		Help:    "Time a client waited for a server connection from its pool.",
		Buckets: o.AcquireBuckets,
	}, []string{"pool"})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sqp_query_errors_total",
		Help: "Statements that ended in an error (SQLSTATE not of class 00, 01 or 02), per pool.",
	}, []string{"pool"})
	m.routing = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sqp_routing_decisions_total",
		Help: "Backends picked for a client or a transaction, per pool and route.",
	}, []string{"pool", "route"})
	m.cacheOps = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sqp_routing_cache_operations_total",
		Help: "Prepared-statement cache operations on server connections: hit, miss (a Parse injected), evict.",
	}, []string{"op"})
	m.bytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sqp_bytes_total",
		Help: "Bytes relayed, by direction seen from the proxy: from_client, to_client, from_server, to_server.",
	}, []string{"direction"})
	m.replays = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "sqp_settings_replays_total",
		Help: "Round trips spent replaying a client's settings on a server connection that had other ones.",
	})
	m.reg.MustRegister(m.query, m.acquire, m.errors, m.routing, m.cacheOps, m.bytes, m.replays,
		&scrapeCollector{o: o, m: m},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	if o.FenceWaits != nil {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sqp_fence_waits_total",
			Help: "Pipelined client messages held until the answers to an earlier Sync group that changed statement names they depend on.",
		}, func() float64 { return float64(o.FenceWaits()) }))
	}
	if o.CancelledWaits != nil {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sqp_cancelled_waits_total",
			Help: "Waits for a server connection that a client's cancel request ended (the client got 57014; its statement reached no server).",
		}, func() float64 { return float64(o.CancelledWaits()) }))
	}
	m.pools.Store(&map[string]*poolChildren{})
	m.routes.Store(&map[routeKey]prometheus.Counter{})
	cache := map[string]prometheus.Counter{}
	for _, op := range []string{CacheHit, CacheMiss, CacheEvict} {
		cache[op] = m.cacheOps.WithLabelValues(op)
	}
	m.cacheBy.Store(&cache)
	bytes := map[string]prometheus.Counter{}
	for _, d := range []string{FromClient, ToClient, FromServer, ToServer} {
		bytes[d] = m.bytes.WithLabelValues(d)
	}
	m.bytesBy.Store(&bytes)
	return m
}

func (m *metrics) pool(name string) *poolChildren {
	if c := (*m.pools.Load())[name]; c != nil {
		return c
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.pools.Load()
	if c := old[name]; c != nil {
		return c
	}
	c := &poolChildren{
		query:   m.query.WithLabelValues(labelValue(name)),
		acquire: m.acquire.WithLabelValues(labelValue(name)),
		errors:  m.errors.WithLabelValues(labelValue(name)),
	}
	next := make(map[string]*poolChildren, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[name] = c
	m.pools.Store(&next)
	return c
}

// counter returns the cached child of cache for k, creating it with mk.
func counter[K comparable](m *metrics, cache *atomic.Pointer[map[K]prometheus.Counter], k K, mk func() prometheus.Counter) prometheus.Counter {
	if c := (*cache.Load())[k]; c != nil {
		return c
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *cache.Load()
	if c := old[k]; c != nil {
		return c
	}
	c := mk()
	next := make(map[K]prometheus.Counter, len(old)+1)
	for kk, v := range old {
		next[kk] = v
	}
	next[k] = c
	cache.Store(&next)
	return c
}

// ObserveQuery records one statement: its duration in the pool's histogram,
// an error when sqlstate is one (not "" and not of class 00, 01 or 02),
// and its shape's statistics. rows is the number of rows returned or
// affected.
func (s *Server) ObserveQuery(pool, route, sql string, dur time.Duration, rows int64, sqlstate string) {
	c := s.metrics.pool(pool)
	c.query.Observe(dur.Seconds())
	if digest.IsError(sqlstate) {
		c.errors.Inc()
	}
	s.store.Observe(pool, route, sql, dur, rows, sqlstate)
}

// ObserveAcquire records how long a client waited for a server connection
// from pool.
func (s *Server) ObserveAcquire(pool string, dur time.Duration) {
	s.metrics.pool(pool).acquire.Observe(dur.Seconds())
}

// ForgetPool drops the metric series of a removed pool (its histograms,
// errors and routing decisions): names clients make up must not grow the
// scrape for good. A pool of that name made later starts from zero, as
// its counters in SHOW POOLS and /api/pools do.
func (s *Server) ForgetPool(pool string) {
	m := s.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	pools := make(map[string]*poolChildren, len(*m.pools.Load()))
	for k, v := range *m.pools.Load() {
		if k != pool {
			pools[k] = v
		}
	}
	m.pools.Store(&pools)
	routes := make(map[routeKey]prometheus.Counter, len(*m.routes.Load()))
	for k, v := range *m.routes.Load() {
		if k.pool != pool {
			routes[k] = v
		}
	}
	m.routes.Store(&routes)
	m.query.DeleteLabelValues(labelValue(pool))
	m.acquire.DeleteLabelValues(labelValue(pool))
	m.errors.DeleteLabelValues(labelValue(pool))
	m.routing.DeletePartialMatch(prometheus.Labels{"pool": labelValue(pool)})
}

// RoutingDecision counts one backend choice for pool on route.
func (s *Server) RoutingDecision(pool, route string) {
	m := s.metrics
	counter(m, &m.routes, routeKey{pool, route}, func() prometheus.Counter {
		return m.routing.WithLabelValues(labelValue(pool), labelValue(route))
	}).Inc()
}

// CacheOp counts one prepared-statement cache operation: CacheHit,
// CacheMiss or CacheEvict.
func (s *Server) CacheOp(op string) {
	m := s.metrics
	counter(m, &m.cacheBy, op, func() prometheus.Counter { return m.cacheOps.WithLabelValues(op) }).Inc()
}

// SettingsReplay counts one replay of a client's settings on a server.
func (s *Server) SettingsReplay() { s.metrics.replays.Inc() }

// AddBytes counts n bytes relayed in direction dir: FromClient, ToClient,
// FromServer or ToServer.
func (s *Server) AddBytes(dir string, n int) { s.bytesCounter(dir).Add(float64(n)) }

// Bytes returns AddBytes for one direction with its counter looked up
// once: a hook called on every read and write of every socket.
func (s *Server) Bytes(dir string) func(n int) {
	c := s.bytesCounter(dir)
	return func(n int) { c.Add(float64(n)) }
}

func (s *Server) bytesCounter(dir string) prometheus.Counter {
	m := s.metrics
	return counter(m, &m.bytesBy, dir, func() prometheus.Counter { return m.bytes.WithLabelValues(dir) })
}

// ClientConnected and ClientDisconnected maintain sqp_client_connections;
// call them once each per client connection.
func (s *Server) ClientConnected()    { s.metrics.clients.Add(1) }
func (s *Server) ClientDisconnected() { s.metrics.clients.Add(-1) }

// scrapeCollector reads the gauges that are state, not events, at scrape
// time: pool sizes from Options.Pools, client connections, digest shapes.
type scrapeCollector struct {
	o *Options
	m *metrics
}

var (
	descPoolConns = prometheus.NewDesc("sqp_pool_connections",
		"Server connections of a pool by state: active (lent to a client) or idle.", []string{"pool", "state"}, nil)
	descPoolWaiting = prometheus.NewDesc("sqp_pool_waiting_clients",
		"Clients waiting for a server connection from a pool.", []string{"pool"}, nil)
	descPoolMax = prometheus.NewDesc("sqp_pool_max_connections",
		"A pool's size limit.", []string{"pool"}, nil)
	descPoolPaused = prometheus.NewDesc("sqp_pool_paused",
		"1 while a pool is paused.", []string{"pool"}, nil)
	descDBConns = prometheus.NewDesc("sqp_database_server_connections",
		"Server connections of a database, all its pools together.", []string{"database"}, nil)
	descDBMax = prometheus.NewDesc("sqp_database_max_server_connections",
		"A database's cap on server connections (max_db_connections), when set.", []string{"database"}, nil)
	descUserConns = prometheus.NewDesc("sqp_user_server_connections",
		"Server connections of a user, all its pools together.", []string{"user"}, nil)
	descUserMax = prometheus.NewDesc("sqp_user_max_server_connections",
		"A user's cap on server connections (max_user_connections), when set.", []string{"user"}, nil)
	descDBClients = prometheus.NewDesc("sqp_database_clients",
		"Client connections of a database, all its pools together.", []string{"database"}, nil)
	descDBMaxClients = prometheus.NewDesc("sqp_database_max_clients",
		"A database's cap on clients (max_db_client_connections), when set.", []string{"database"}, nil)
	descUserClients = prometheus.NewDesc("sqp_user_clients",
		"Client connections of a user, all its pools together.", []string{"user"}, nil)
	descUserMaxClients = prometheus.NewDesc("sqp_user_max_clients",
		"A user's cap on clients (max_user_client_connections), when set.", []string{"user"}, nil)
	descClients = prometheus.NewDesc("sqp_client_connections",
		"Client connections open.", nil, nil)
	descShapes = prometheus.NewDesc("sqp_digest_shapes",
		"Query shapes held by the digest store.", nil, nil)
	descEvicted = prometheus.NewDesc("sqp_digest_evictions_total",
		"Query shapes evicted from the digest store since the proxy started (a reset of the store does not lower it).", nil, nil)
	descHandBacks = prometheus.NewDesc("sqp_loop_handbacks_total",
		"Sessions the event loop handed back to their goroutines, by reason.", []string{"reason"}, nil)
)

func (c *scrapeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPoolConns, descPoolWaiting, descPoolMax, descPoolPaused, descDBConns, descDBMax,
		descUserConns, descUserMax, descDBClients, descDBMaxClients, descUserClients, descUserMaxClients,
		descClients, descShapes, descEvicted, descHandBacks} {
		ch <- d
	}
}

func (c *scrapeCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descClients, prometheus.GaugeValue, float64(c.m.clients.Load()))
	sum := c.o.Digests.Summary()
	ch <- prometheus.MustNewConstMetric(descShapes, prometheus.GaugeValue, float64(sum.Shapes))
	ch <- prometheus.MustNewConstMetric(descEvicted, prometheus.CounterValue, float64(sum.EvictedTotal))
	if c.o.LoopHandBacks != nil {
		for reason, n := range c.o.LoopHandBacks() {
			ch <- prometheus.MustNewConstMetric(descHandBacks, prometheus.CounterValue, float64(n), reason)
		}
	}
	if c.o.Pools == nil {
		return
	}
	seen := map[string]bool{}
	dbs, users := map[string]bool{}, map[string]bool{}
	for _, p := range c.o.Pools() {
		p.Name, p.Database, p.User = labelValue(p.Name), labelValue(p.Database), labelValue(p.User)
		// A database's and a user's counts are shared by their pools:
		// once each.
		if p.Database != "" && !dbs[p.Database] {
			dbs[p.Database] = true
			gaugeWithCap(ch, descDBConns, descDBMax, p.DBConnections, p.MaxDBConnections, p.Database)
			gaugeWithCap(ch, descDBClients, descDBMaxClients, p.DBClients, p.MaxDBClients, p.Database)
		}
		if p.User != "" && !users[p.User] {
			users[p.User] = true
			gaugeWithCap(ch, descUserConns, descUserMax, p.UserConnections, p.MaxUserConnections, p.User)
			gaugeWithCap(ch, descUserClients, descUserMaxClients, p.UserClients, p.MaxUserClients, p.User)
		}
		if seen[p.Name] { // a duplicate would fail the whole scrape
			continue
		}
		seen[p.Name] = true
		ch <- prometheus.MustNewConstMetric(descPoolConns, prometheus.GaugeValue, float64(p.Active), p.Name, "active")
		ch <- prometheus.MustNewConstMetric(descPoolConns, prometheus.GaugeValue, float64(p.Idle), p.Name, "idle")
		ch <- prometheus.MustNewConstMetric(descPoolWaiting, prometheus.GaugeValue, float64(p.Waiting), p.Name)
		if p.MaxSize > 0 {
			ch <- prometheus.MustNewConstMetric(descPoolMax, prometheus.GaugeValue, float64(p.MaxSize), p.Name)
		}
		paused := 0.0
		if p.Paused {
			paused = 1
		}
		ch <- prometheus.MustNewConstMetric(descPoolPaused, prometheus.GaugeValue, paused, p.Name)
	}
}

// gaugeWithCap sends a count labelled label and, when one is set (above
// 0), its cap.
func gaugeWithCap(ch chan<- prometheus.Metric, count, capDesc *prometheus.Desc, n, max int, label string) {
	ch <- prometheus.MustNewConstMetric(count, prometheus.GaugeValue, float64(n), label)
	if max > 0 {
		ch <- prometheus.MustNewConstMetric(capDesc, prometheus.GaugeValue, float64(max), label)
	}
}

// labelValue is s made valid UTF-8, as Prometheus requires of a label
// value: a client may name a database or user with any bytes (PostgreSQL
// takes them), and one invalid value would fail every scrape, or panic
// the session whose pool it names. An invalid s is quoted Go-style
// ("caf\xe9"), so two names never share a label, as they would with
// U+FFFD for each bad byte (and forgetting one pool would drop the
// other's series).
func labelValue(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strconv.Quote(s)
}
