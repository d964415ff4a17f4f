// Serving: the DuckDB database, the listener, sessions, cancel keys and graceful shutdown.

package duckwire

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/qpkit/qpkit/pkg/pgwire"
)

// Server serves one DuckDB file. Create it with New, run it with Serve.
type Server struct {
	cfg       Config
	connector *duckdb.Connector
	metrics   *metrics
	takenAt   atomic.Pointer[time.Time] // cached snapshot time

	// queryCtx parents every query; canceling it interrupts them all.
	queryCtx    context.Context
	cancelQuery context.CancelFunc
	// acceptCtx parents the startups; shutdown cancels it at once, so a
	// connection still in its startup does not hold the drain.
	acceptCtx    context.Context
	cancelAccept context.CancelFunc

	mu       sync.Mutex
	sessions map[uint32]*session // by cancel key PID
	draining bool
	wg       sync.WaitGroup
}

// Serve opens cfg.Database and serves until ctx ends, then stops
// gracefully: no new clients, idle sessions are closed, running queries get
// cfg.ShutdownGrace to finish before they are canceled.
func Serve(ctx context.Context, cfg Config) error {
	s, err := New(cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Serve(ctx)
}

// New opens the database read-only; nothing listens yet.
func New(cfg Config) (*Server, error) {
	c := cfg.withDefaults()
	if c.Database == "" {
		return nil, errors.New("duckwire: no database file")
	}
	if _, err := time.LoadLocation(c.TimeZone); err != nil {
		return nil, fmt.Errorf("duckwire: time zone %q: %w", c.TimeZone, err)
	}
	q := url.Values{"access_mode": {"read_only"}, "enable_external_access": {"false"}}
	if c.Threads > 0 {
		q.Set("threads", strconv.Itoa(c.Threads))
	}
	if c.MemoryLimit != "" {
		q.Set("memory_limit", c.MemoryLimit)
	}
	conn, err := duckdb.NewConnector(c.Database+"?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("duckwire: open %s: %w", c.Database, err)
	}
	s := &Server{cfg: c, connector: conn, sessions: map[uint32]*session{}}
	s.queryCtx, s.cancelQuery = context.WithCancel(context.Background())
	s.acceptCtx, s.cancelAccept = context.WithCancel(s.queryCtx)
	s.metrics = newMetrics(s)
	return s, nil
}

// Close closes the database; call it after Serve returns.
func (s *Server) Close() error {
	s.cancelQuery()
	return s.connector.Close()
}

// connect opens a session's own DuckDB connection with the dialect's
// session settings.
func (s *Server) connect(ctx context.Context) (*duckdb.Conn, error) {
	dc, err := s.connector.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("duckdb connect: %w", err)
	}
	c := dc.(*duckdb.Conn)
	for _, q := range s.cfg.Dialect.SessionSQL {
		if _, err := c.ExecContext(ctx, q, nil); err != nil {
			c.Close()
			return nil, fmt.Errorf("session setting %q: %w", q, err)
		}
	}
	if err := setPublicSearchPath(ctx, c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// setPublicSearchPath puts schema public (where the snapshot keeps
// PostgreSQL's public tables) first on DuckDB's search path, as
// PostgreSQL's default search_path does, when the file has that schema;
// DuckDB refuses a search path naming a missing schema.
func setPublicSearchPath(ctx context.Context, c *duckdb.Conn) error {
	rows, err := c.QueryContext(ctx, "SELECT count(*) FROM duckdb_schemas() WHERE database_name = current_database() AND schema_name = 'public'", nil)
	if err != nil {
		return fmt.Errorf("look for schema public: %w", err)
	}
	v := make([]driver.Value, 1)
	err = rows.Next(v)
	rows.Close()
	if err != nil {
		return fmt.Errorf("look for schema public: %w", err)
	}
	if n, _ := v[0].(int64); n == 0 {
		return nil
	}
	if _, err := c.ExecContext(ctx, "SET search_path = 'public,main'", nil); err != nil {
		return fmt.Errorf("search path: %w", err)
	}
	return nil
}

// exec runs a statement without results on a DuckDB connection.
func execDuck(ctx context.Context, c *duckdb.Conn, q string, args ...driver.NamedValue) error {
	_, err := c.ExecContext(ctx, q, args)
	return err
}

// Serve listens (cfg.Listener or cfg.Listen, and the admin address) and
// serves until ctx ends; see the package Serve.
func (s *Server) Serve(ctx context.Context) error {
	log := s.cfg.Log
	ln := s.cfg.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.cfg.Listen); err != nil {
			return fmt.Errorf("duckwire: listen: %w", err)
		}
	}
	defer ln.Close()
	adminAddr := ""
	if aln := s.cfg.AdminListener; aln != nil || s.cfg.Admin != "" {
		if aln == nil {
			var err error
			if aln, err = net.Listen("tcp", s.cfg.Admin); err != nil {
				return fmt.Errorf("duckwire: admin listen: %w", err)
			}
		}
		hs := &http.Server{Handler: s.metrics.admin, ReadHeaderTimeout: 10 * time.Second}
		go hs.Serve(aln)
		defer hs.Close()
		adminAddr = aln.Addr().String()
		log.Info("admin listening", "addr", adminAddr)
	}
	log.Info("qpanalytics listening", "addr", ln.Addr().String(), "database", s.cfg.Database)
	if s.cfg.Ready != nil {
		s.cfg.Ready(ln.Addr().String(), adminAddr)
	}
	acceptErr := make(chan error, 1)
	go func() { acceptErr <- s.acceptLoop(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-acceptErr:
		err = fmt.Errorf("duckwire: accept: %w", err)
	}
	ln.Close()
	s.shutdown()
	return err
}

func (s *Server) acceptLoop(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			s.mu.Lock()
			draining := s.draining
			s.mu.Unlock()
			if draining || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.handle(c)
		}()
	}
}

// shutdown wakes idle sessions so they close, waits up to the grace period
// for running queries, then cancels them and closes what is left.
func (s *Server) shutdown() {
	s.cancelAccept()
	s.mu.Lock()
	s.draining = true
	for _, ss := range s.sessions {
		ss.wake()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(s.cfg.ShutdownGrace):
		s.cfg.Log.Warn("shutdown grace over; canceling running queries")
		s.cancelQuery()
		s.mu.Lock()
		for _, ss := range s.sessions {
			ss.conn.Close()
		}
		s.mu.Unlock()
		<-done
	}
	s.cfg.Log.Info("stopped")
}

// handle runs one connection: startup, then a session or a cancel request.
func (s *Server) handle(c net.Conn) {
	defer c.Close()
	defer func() {
		if r := recover(); r != nil {
			s.cfg.Log.Error("connection panicked", "remote", c.RemoteAddr().String(), "panic", r)
		}
	}()
	cl, st, err := pgwire.Accept(s.acceptCtx, c, s.cfg.Auth)
	if err != nil {
		s.cfg.Log.Debug("startup failed", "remote", c.RemoteAddr().String(), "err", err)
		return
	}
	if st.Cancel != nil {
		s.cancel(*st.Cancel)
		return
	}
	defer cl.Conn.Close()
	s.mu.Lock()
	if s.draining {
		s.mu.Unlock()
		pgwire.WriteError(cl.Conn, "FATAL", pgwire.CodeCannotConnectNow, "the database system is shutting down")
		return
	}
	if len(s.sessions) >= s.cfg.MaxClients {
		s.mu.Unlock()
		pgwire.WriteError(cl.Conn, "FATAL", pgwire.CodeTooManyConnections, "sorry, too many clients already")
		return
	}
	ss := newSession(s, cl)
	s.sessions[cl.Key.PID] = ss
	s.mu.Unlock()
	s.metrics.sessions.Inc()
	defer func() {
		s.mu.Lock()
		delete(s.sessions, cl.Key.PID)
		s.mu.Unlock()
		s.metrics.sessions.Dec()
	}()
	if err := ss.run(); err != nil {
		s.cfg.Log.Debug("session ended", "remote", c.RemoteAddr().String(), "err", err)
	}
}

// cancel interrupts the running query of the session with key k, if any.
func (s *Server) cancel(k pgwire.CancelKey) {
	s.mu.Lock()
	ss := s.sessions[k.PID]
	s.mu.Unlock()
	if ss != nil && ss.key.Equal(k) {
		ss.cancelRunning()
	}
}

func (s *Server) isDraining() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draining
}
