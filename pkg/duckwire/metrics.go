// Metrics and health: query outcomes and latency, sessions, snapshot age and file size on the admin port.

package duckwire

import (
	"context"
	"errors"
	"math"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/qpkit/qpkit/pkg/admin"
)

// Query outcomes, the label of qpanalytics_queries_total.
const (
	outcomeOK       = "ok"
	outcomeError    = "error"
	outcomeCanceled = "canceled"
	outcomeRefused  = "refused"
)

type metrics struct {
	admin    *admin.Server
	queries  *prometheus.CounterVec
	byOut    map[string]prometheus.Counter
	latency  prometheus.Histogram
	sessions prometheus.Gauge
}

func newMetrics(s *Server) *metrics {
	m := &metrics{admin: admin.New(admin.Options{Health: s.health, Clients: s.clients})}
	m.queries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "qpanalytics_queries_total",
		Help: "Queries by outcome: ok, error, canceled (cancel request, statement_timeout or shutdown), refused (writes, untranslatable SQL).",
	}, []string{"outcome"})
	m.byOut = map[string]prometheus.Counter{}
	for _, o := range []string{outcomeOK, outcomeError, outcomeCanceled, outcomeRefused} {
		m.byOut[o] = m.queries.WithLabelValues(o)
	}
	m.latency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "qpanalytics_query_duration_seconds",
		Help:    "Time from a query's arrival to its last row written, for queries that ran.",
		Buckets: admin.DefaultQueryBuckets,
	})
	m.sessions = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "qpanalytics_sessions", Help: "Open client sessions.",
	})
	snapAge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "qpanalytics_snapshot_age_seconds",
		Help: "Seconds since the served snapshot was taken (NaN when unknown).",
	}, func() float64 {
		t, err := s.snapshotTime()
		if err != nil {
			return nan()
		}
		return time.Since(t).Seconds()
	})
	size := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "qpanalytics_database_bytes", Help: "Size of the served DuckDB file.",
	}, func() float64 {
		fi, err := os.Stat(s.cfg.Database)
		if err != nil {
			return nan()
		}
		return float64(fi.Size())
	})
	m.admin.Registry().MustRegister(m.queries, m.latency, m.sessions, snapAge, size)
	return m
}

func (m *metrics) query(outcome string, d time.Duration) {
	m.byOut[outcome].Inc()
	if outcome == outcomeOK {
		m.latency.Observe(d.Seconds())
	}
}

// failed counts a query error, telling cancels from other failures.
func (m *metrics) failed(err error, d time.Duration) {
	if code, _ := sqlState(err); code == codeQueryCanceled {
		m.query(outcomeCanceled, d)
		return
	}
	m.query(outcomeError, d)
}

// clients lists the sessions for /api/clients.
func (s *Server) clients() []admin.ClientStat {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]admin.ClientStat, 0, len(s.sessions))
	for _, ss := range s.sessions {
		out = append(out, ss.stat())
	}
	return out
}

// health is /healthz: the database answers a trivial query.
func (s *Server) health() error {
	if s.isDraining() {
		return errors.New("shutting down")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := s.connector.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return nil
}

// snapshotTime is Config.SnapshotTime, or the newest taken_at in the
// metadata schema (any of its tables with such a column).
func (s *Server) snapshotTime() (time.Time, error) {
	if s.cfg.SnapshotTime != nil {
		return s.cfg.SnapshotTime()
	}
	if t := s.takenAt.Load(); t != nil {
		return *t, nil // the file is read-only: it cannot change
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := s.connect(ctx)
	if err != nil {
		return time.Time{}, err
	}
	defer c.Close()
	ss := &session{duck: c}
	tables, err := ss.rows(`SELECT table_name FROM duckdb_columns() WHERE schema_name = '` + MetaSchema +
		`' AND column_name = 'taken_at' AND database_name = current_database()`)
	if err != nil {
		return time.Time{}, err
	}
	var newest time.Time
	for _, t := range tables {
		name, _ := t[0].(string)
		rows, err := ss.rows(`SELECT max(taken_at)::TIMESTAMPTZ FROM "` + MetaSchema + `"."` + name + `"`)
		if err != nil || len(rows) == 0 {
			continue
		}
		if tm, ok := rows[0][0].(time.Time); ok && tm.After(newest) {
			newest = tm
		}
	}
	if newest.IsZero() {
		return time.Time{}, errors.New("no snapshot time in " + MetaSchema)
	}
	s.takenAt.Store(&newest)
	return newest, nil
}

func nan() float64 { return math.NaN() }
