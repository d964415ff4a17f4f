// Prometheus metrics of the tool calls and the connection pool, on a
// registry of their own.

package mcpserver

import (
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics counts tool calls by tool and verdict and times them, and reports
// the pool's connections when scraped.
type Metrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	errors   *prometheus.CounterVec
	refusals *prometheus.CounterVec
	limited  *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// NewMetrics returns the metrics of a server on pool; audit may be nil.
func NewMetrics(pool *pgxpool.Pool, audit *Auditor) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpg_tool_calls_total", Help: "Tool calls by tool and verdict (allow, refuse, error, rate_limited).",
		}, []string{"tool", "verdict"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpg_tool_errors_total", Help: "Tool calls that failed with a query or argument error, by tool.",
		}, []string{"tool"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpg_tool_refusals_total", Help: "Statements the validator refused, by tool.",
		}, []string{"tool"}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpg_tool_rate_limited_total", Help: "Tool calls refused by the rate limit, by tool.",
		}, []string{"tool"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcpg_tool_call_duration_seconds",
			Help:    "Tool call latency (server side, including the database round trips), by tool.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"tool"}),
	}
	m.reg.MustRegister(m.calls, m.errors, m.refusals, m.limited, m.latency,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	gauge := func(name, help string, f func(*pgxpool.Stat) float64) {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help},
			func() float64 { return f(pool.Stat()) }))
	}
	gauge("mcpg_pool_acquired_conns", "Connections in use.", func(s *pgxpool.Stat) float64 { return float64(s.AcquiredConns()) })
	gauge("mcpg_pool_idle_conns", "Idle connections.", func(s *pgxpool.Stat) float64 { return float64(s.IdleConns()) })
	gauge("mcpg_pool_total_conns", "Open connections (acquired, idle and being opened).", func(s *pgxpool.Stat) float64 { return float64(s.TotalConns()) })
	gauge("mcpg_pool_max_conns", "The pool's size.", func(s *pgxpool.Stat) float64 { return float64(s.MaxConns()) })
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "mcpg_pool_acquire_wait_seconds_total", Help: "Time spent waiting for a connection.",
	}, func() float64 { return pool.Stat().AcquireDuration().Seconds() }))
	if audit != nil {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "mcpg_audit_dropped_total", Help: "Audit records dropped because the log could not keep up.",
		}, func() float64 { return float64(audit.Dropped()) }))
	}
	return m
}

// Handler serves the metrics in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// observe records one call; a nil *Metrics records nothing.
func (m *Metrics) observe(tool, verdict string, d time.Duration) {
	if m == nil {
		return
	}
	m.calls.WithLabelValues(tool, verdict).Inc()
	switch verdict {
	case VerdictError:
		m.errors.WithLabelValues(tool).Inc()
	case VerdictRefuse:
		m.refusals.WithLabelValues(tool).Inc()
	case VerdictRateLimited:
		m.limited.WithLabelValues(tool).Inc()
	}
	m.latency.WithLabelValues(tool).Observe(d.Seconds())
}
