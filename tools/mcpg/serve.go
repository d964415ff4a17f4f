// The serve command: the MCP server on stdio or streamable HTTP.

package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/server"
	"github.com/qpkit/qpkit/pkg/mcpserver"
	"github.com/qpkit/qpkit/pkg/tracing"
)

type serveCmd struct {
	DatabaseURL         string   `name:"database-url" env:"MCPG_DATABASE_URL" required:"" placeholder:"URL" help:"PostgreSQL connection URL (postgres://user@host/db)."`
	StatementTimeoutMS  int      `name:"statement-timeout-ms" env:"MCPG_STATEMENT_TIMEOUT_MS" default:"30000" help:"Statement timeout in milliseconds (default: ${default})."`
	MaxRows             int      `name:"max-rows" env:"MCPG_MAX_ROWS" default:"100" help:"Most rows a query returns (default: ${default})."`
	MaxBytes            int      `name:"max-bytes" env:"MCPG_MAX_BYTES" default:"32768" help:"Largest result document in bytes (default: ${default})."`
	PoolSize            int      `name:"pool-size" env:"MCPG_POOL_SIZE" default:"4" help:"Database connections (default: ${default})."`
	AllowFunction       []string `name:"allow-function" placeholder:"NAME" help:"Also allow this function (repeatable); NAME or SCHEMA.NAME as PostgreSQL stores it."`
	AllowExplainAnalyze bool     `name:"allow-explain-analyze" help:"Allow EXPLAIN ANALYZE, which executes the statement (default: off)."`
	HTTP                string   `name:"http" env:"MCPG_HTTP" placeholder:"ADDR" help:"Serve streamable HTTP on ADDR (host:port, path /mcp) instead of stdio."`
	AuthToken           string   `name:"auth-token" env:"MCPG_AUTH_TOKEN" placeholder:"TOKEN" help:"HTTP: require Authorization: Bearer TOKEN; required unless ADDR is loopback."`
	RateLimit           float64  `name:"rate-limit" env:"MCPG_RATE_LIMIT" default:"0" placeholder:"PER_SEC" help:"Tool calls per second per session, burst max(1, rate); 0 is off (default: ${default})."`
	PrincipalRateLimit  float64  `name:"principal-rate-limit" env:"MCPG_PRINCIPAL_RATE_LIMIT" default:"0" placeholder:"PER_SEC" help:"Tool calls per second of all sessions of one principal (the auth token, or stdio) together; 0 means --rate-limit (default: ${default})."`
	AuditLog            string   `name:"audit-log" env:"MCPG_AUDIT_LOG" placeholder:"PATH" help:"Append one JSON line per tool call to PATH (- is stderr); default none."`
	StrictRole          bool     `name:"strict-role" env:"MCPG_STRICT_ROLE" help:"Refuse to start (exit 2) when the role is a superuser or in pg_read_server_files, pg_write_server_files or pg_execute_server_program; otherwise that is a warning. With it, an unreachable database at start-up is a failure (exit 3) instead of a warning."`
	FenceResults        bool     `name:"fence-results" env:"MCPG_FENCE_RESULTS" help:"Wrap run_select results in <untrusted-data id=RANDOM> markers with a note that they are data, not instructions (default: off)."`
	AllowOrigin         []string `name:"allow-origin" placeholder:"ORIGIN" help:"HTTP: also accept requests with this Origin header (repeatable); loopback origins are always accepted."`
}

// shutdownTimeout bounds how long SIGTERM waits for in-flight HTTP calls.
const shutdownTimeout = 10 * time.Second

// Run serves MCP on stdin/stdout until stdin closes or ctx ends, or with
// --http on HTTP until ctx ends. Logs go to stderr: under stdio, stdout is
// the protocol.
func (c *serveCmd) Run(e *env) error {
	if c.PoolSize < 1 || c.PoolSize > 1000 {
		return usagef("--pool-size %d is out of range 1..1000", c.PoolSize)
	}
	if c.StatementTimeoutMS < 1 {
		return usagef("--statement-timeout-ms %d must be at least 1", c.StatementTimeoutMS)
	}
	cfg := mcpserver.Config{
		StatementTimeout:    time.Duration(c.StatementTimeoutMS) * time.Millisecond,
		MaxRows:             c.MaxRows,
		MaxBytes:            c.MaxBytes,
		AllowFunctions:      c.AllowFunction,
		AllowExplainAnalyze: c.AllowExplainAnalyze,
		RateLimit:           c.RateLimit,
		PrincipalRateLimit:  c.PrincipalRateLimit,
		FenceResults:        c.FenceResults,
		Logger:              slog.New(slog.NewTextHandler(e.stderr, nil)),
	}
	if c.MaxRows < 1 {
		return usagef("--max-rows %d must be at least 1", c.MaxRows)
	}
	if c.MaxBytes < 1 {
		return usagef("--max-bytes %d must be at least 1", c.MaxBytes)
	}
	if err := cfg.Check(); err != nil {
		return usagef("%s", err)
	}
	if c.HTTP != "" {
		if _, _, err := net.SplitHostPort(c.HTTP); err != nil {
			return usagef("--http %q is not host:port", c.HTTP)
		}
		if !mcpserver.IsLoopbackAddr(c.HTTP) && c.AuthToken == "" {
			return usagef("--http %s is not a loopback address: set --auth-token (or MCPG_AUTH_TOKEN) to serve beyond this machine", c.HTTP)
		}
	} else if c.AuthToken != "" || len(c.AllowOrigin) > 0 {
		return usagef("--auth-token and --allow-origin need --http")
	}
	if c.AuditLog != "" {
		w := e.stderr
		if c.AuditLog != "-" {
			f, err := os.OpenFile(c.AuditLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
			if err != nil {
				return usagef("cannot open audit log: %v", err)
			}
			defer f.Close()
			w = f
		}
		cfg.Audit = mcpserver.NewAuditor(w, 0)
		defer func() {
			if err := cfg.Audit.Close(); err != nil {
				cfg.Logger.Error("audit log write failed", "err", err)
			}
			if n := cfg.Audit.Dropped(); n > 0 {
				cfg.Logger.Warn("audit records dropped: the log could not keep up", "dropped", n)
			}
		}()
	}
	tp, err := tracing.FromEnv(e.ctx, "mcpg", cfg.Version)
	if err != nil {
		return usagef("%s", err)
	}
	if tp != nil {
		cfg.Tracer = tp.Tracer("github.com/qpkit/qpkit/pkg/mcpserver")
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tp.Shutdown(ctx); err != nil {
				cfg.Logger.Warn("trace export failed at shutdown", "err", err)
			}
		}()
		cfg.Logger.Info("tracing: exporting spans over OTLP/HTTP")
	}
	pool, err := openPool(e.ctx, c.DatabaseURL, c.PoolSize)
	if err != nil {
		return usagef("%s", err)
	}
	defer pool.Close()
	// The pool connects lazily, so mcpg starts while the database is down;
	// tool calls then answer "database unavailable" until it is back.
	checkCtx, cancelCheck := context.WithTimeout(e.ctx, 2*mcpserver.DefaultConnectTimeout)
	role, err := mcpserver.CheckRole(checkCtx, pool)
	cancelCheck()
	switch {
	case err != nil && c.StrictRole:
		return &failure{fmt.Errorf("--strict-role: cannot check the role, database unreachable: %w", err)}
	case err != nil:
		cfg.Logger.Warn("database unreachable at start-up: role check skipped; serving anyway (--strict-role refuses to start)", "err", err)
	case role.Dangerous():
		if c.StrictRole {
			return usagef("--strict-role: %s; connect as a SELECT-only role", role.Problem())
		}
		cfg.Logger.Warn("DANGEROUS DATABASE ROLE: "+role.Problem()+"; connect as a SELECT-only role (--strict-role refuses to start)",
			"role", role.Name, "superuser", role.Superuser, "risky_roles", role.Risky)
	}
	cfg.Pool = pool
	if c.HTTP != "" {
		cfg.Metrics = mcpserver.NewMetrics(pool, cfg.Audit)
	}
	srv, err := mcpserver.New(cfg)
	if err != nil {
		return &failure{err}
	}
	if c.HTTP != "" {
		return c.serveHTTP(e, srv, cfg.Metrics, cfg.Logger)
	}
	cfg.Logger.Info("serving MCP on stdio", "max_rows", cfg.MaxRows, "max_bytes", cfg.MaxBytes,
		"statement_timeout_ms", c.StatementTimeoutMS, "pool_size", c.PoolSize)
	stdio := server.NewStdioServer(srv)
	stdio.SetErrorLogger(log.New(e.stderr, "mcpg: ", 0))
	err = stdio.Listen(e.ctx, e.stdin, e.stdout)
	if err != nil && !errors.Is(err, context.Canceled) {
		return &failure{err}
	}
	return nil
}

// serveHTTP serves srv on c.HTTP until e.ctx ends (SIGINT, SIGTERM), then
// stops accepting and waits up to shutdownTimeout for in-flight calls.
func (c *serveCmd) serveHTTP(e *env, srv *server.MCPServer, m *mcpserver.Metrics, logger *slog.Logger) error {
	ln, err := net.Listen("tcp", c.HTTP)
	if err != nil {
		return &failure{fmt.Errorf("listen: %w", err)}
	}
	handler := mcpserver.NewHTTPHandler(srv, mcpserver.HTTPOptions{
		Token: c.AuthToken, AllowOrigins: c.AllowOrigin, Metrics: m.Handler(),
	})
	hs := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(e.stderr, "mcpg: http: ", 0),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	logger.Info("serving MCP over HTTP", "addr", ln.Addr().String(), "path", mcpserver.EndpointPath,
		"auth", c.AuthToken != "")
	select {
	case err := <-served:
		return &failure{err}
	case <-e.ctx.Done():
	}
	logger.Info("shutting down", "timeout", shutdownTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	hs.RegisterOnShutdown(func() { handler.CloseSessions(ctx) })
	if err := hs.Shutdown(ctx); err != nil {
		return &failure{fmt.Errorf("shutdown: %w", err)}
	}
	<-served
	return nil
}

// openPool builds the pool without connecting (mcpserver.ConfigureLazyPool).
func openPool(ctx context.Context, url string, size int) (*pgxpool.Pool, error) {
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("--database-url: %w", err)
	}
	pcfg.MaxConns = int32(size)
	mcpserver.ConfigureLazyPool(pcfg)
	return pgxpool.NewWithConfig(ctx, pcfg)
}
