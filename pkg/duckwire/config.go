// Settings: Config and its defaults.

package duckwire

import (
	"log/slog"
	"net"
	"time"

	"github.com/qpkit/qpkit/pkg/pgwire"
)

// Defaults for zero Config fields.
const (
	DefaultListen        = "127.0.0.1:5433"
	DefaultMaxClients    = 100
	DefaultMaxMessage    = 1 << 20
	DefaultShutdownGrace = 10 * time.Second
	DefaultTimeZone      = "UTC"
	// ServerVersion is what clients see as server_version: PostgreSQL 15
	// syntax and catalogs are what the dialect aims at.
	ServerVersion    = "15.0 (qpanalytics)"
	ServerVersionNum = "150000"
)

// Config is what Serve needs. Database is required; every other field has a
// default.
type Config struct {
	// Database is the DuckDB file to serve; it is opened read-only.
	Database string
	// Listen is the TCP address to listen on (DefaultListen); ignored when
	// Listener is set.
	Listen   string
	Listener net.Listener
	// Admin is the address of the admin HTTP server (/healthz, /metrics);
	// empty and no AdminListener: none.
	Admin         string
	AdminListener net.Listener
	// Auth configures TLS and authentication. Nil trusts every client.
	Auth *pgwire.ServerConfig
	// MaxClients bounds concurrent sessions (DefaultMaxClients).
	MaxClients int
	// MaxMessage bounds a client message body in bytes (DefaultMaxMessage).
	MaxMessage int
	// ShutdownGrace is how long running queries may finish after ctx ends
	// before they are canceled (DefaultShutdownGrace).
	ShutdownGrace time.Duration
	// TimeZone is the sessions' initial TimeZone (DefaultTimeZone).
	TimeZone string
	// Threads and MemoryLimit are DuckDB's threads and memory_limit; zero
	// and empty keep DuckDB's defaults.
	Threads     int
	MemoryLimit string
	// Dialect translates PostgreSQL SQL to DuckDB SQL. Nil: DefaultDialect.
	Dialect *Dialect
	// SnapshotTime reports when the served snapshot was taken, for the
	// snapshot age metric. Nil: read from the _qpanalytics schema.
	SnapshotTime func() (time.Time, error)
	// Log receives the server's log. Nil: slog.Default().
	Log *slog.Logger
	// Ready, when set, is told the bound addresses once listening (the
	// admin address is "" without one).
	Ready func(addr, admin string)
}

func (c *Config) withDefaults() Config {
	d := *c
	if d.Listen == "" {
		d.Listen = DefaultListen
	}
	if d.MaxClients <= 0 {
		d.MaxClients = DefaultMaxClients
	}
	if d.MaxMessage <= 0 {
		d.MaxMessage = DefaultMaxMessage
	}
	if d.ShutdownGrace <= 0 {
		d.ShutdownGrace = DefaultShutdownGrace
	}
	if d.TimeZone == "" {
		d.TimeZone = DefaultTimeZone
	}
	if d.Dialect == nil {
		d.Dialect = DefaultDialect
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.Auth == nil {
		d.Auth = &pgwire.ServerConfig{Credentials: func(string, string) (pgwire.Credential, error) {
			return pgwire.Credential{Method: pgwire.AuthTrust}, nil
		}}
	}
	return d
}
