// Serving: mcpg's server on stdio or streamable HTTP, from settings to shutdown.

package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/server"
	"github.com/qpkit/qpkit/pkg/pgexec"
	"github.com/qpkit/qpkit/pkg/tracing"
)

// ServeOptions are Serve's settings: the server's own (Config) and what
// to connect to, how to serve and where to log.
type ServeOptions struct {
	// Config is the server's settings. Serve sets Pool, Audit, Metrics
	// (HTTP only) and Tracer; a nil Logger is a text logger on Stderr.
	Config Config
	// DatabaseURL is the PostgreSQL connection URL; PoolSize the number of
	// connections, 1..1000. The pool connects lazily (ConfigureLazyPool),
	// so Serve starts while the database is down.
	DatabaseURL string
	PoolSize    int
	// HTTPAddr is the host:port to serve streamable HTTP on, with HTTP's
	// token (required unless HTTPAddr is loopback) and origins; Serve sets
	// its Metrics. "" serves stdio, where a token or origins are an error.
	HTTPAddr string
	HTTP     HTTPOptions
	// AuditLog is a file to append audit records to ("-" is Stderr); ""
	// writes none.
	AuditLog string
	// StrictRole refuses to start with a dangerous role (Role.Dangerous)
	// or when the role cannot be checked; otherwise those are warnings.
	StrictRole bool
	// Stdin and Stdout carry the protocol under stdio; Stderr gets the
	// logs and the transports' error lines.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// SetupError is a setting or what it names that Serve refuses before
// serving: out of range, HTTP beyond loopback without a token, a bad
// database URL or OTEL_* variable, an audit log it cannot open, a
// dangerous role under StrictRole. mcpg exits 2 for
// it. Any other error of Serve means it could not serve (exit 3): the
// role unchecked under StrictRole, the listener or the transport failed.
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

// shutdownTimeout bounds how long Serve waits for in-flight HTTP calls
// once ctx ends.
const shutdownTimeout = 10 * time.Second

// roleCheckTimeout bounds the role check at start-up.
const roleCheckTimeout = 2 * DefaultConnectTimeout

// Serve serves MCP until ctx ends: on HTTPAddr, then waiting up to 10 s
// for in-flight calls, or on Stdin/Stdout, ending early when Stdin
// closes. It returns nil after a clean stop. Its messages name mcpg's
// flags, which is what the operator reads.
func Serve(ctx context.Context, o ServeOptions) error {
	cfg := o.Config
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(o.Stderr, nil))
	}
	if err := o.check(&cfg); err != nil {
		return &SetupError{err}
	}
	if o.AuditLog != "" {
		w := o.Stderr
		if o.AuditLog != "-" {
			f, err := os.OpenFile(o.AuditLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
			if err != nil {
				return &SetupError{fmt.Errorf("cannot open audit log: %v", err)}
			}
			defer f.Close()
			w = f
		}
		cfg.Audit = NewAuditor(w, 0)
		defer closeAudit(cfg.Audit, cfg.Logger)
	}
	tp, err := tracing.FromEnv(ctx, "mcpg", cfg.Version)
	if err != nil {
		return &SetupError{err}
	}
	if tp != nil {
		cfg.Tracer = tp.Tracer("github.com/qpkit/qpkit/pkg/mcpserver")
		defer shutdownTracing(tp, cfg.Logger)
		cfg.Logger.Info("tracing: exporting spans over OTLP/HTTP")
	}
	pool, err := openPool(ctx, o.DatabaseURL, o.PoolSize)
	if err != nil {
		return &SetupError{err}
	}
	defer pgexec.ClosePool(pool) // ends the waits of connections held by canceled statements
	version, err := checkRole(ctx, pool, o.StrictRole, cfg.Logger)
	if err != nil {
		return err
	}
	if cfg.ServerVersion == 0 {
		// 0 when the database was unreachable: the validator then
		// assumes PostgreSQL 15, refusing newer syntax.
		cfg.ServerVersion = version
	}
	cfg.Pool = pool
	if o.HTTPAddr != "" {
		cfg.Metrics = NewMetrics(pool, cfg.Audit)
	}
	srv, err := New(cfg)
	if err != nil {
		return err
	}
	if o.HTTPAddr != "" {
		opts := o.HTTP
		opts.Metrics = cfg.Metrics.Handler()
		return serveHTTP(ctx, srv, o.HTTPAddr, opts, o.Stderr, cfg.Logger)
	}
	cfg.Logger.Info("serving MCP on stdio", "max_rows", cfg.MaxRows, "max_bytes", cfg.MaxBytes,
		"statement_timeout_ms", cfg.StatementTimeout.Milliseconds(), "pool_size", o.PoolSize)
	if err := serveStdio(ctx, srv, fastPathOf(srv), o.Stdin, o.Stdout, log.New(o.Stderr, "mcpg: ", 0)); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// check refuses settings out of range, and HTTP beyond this machine
// without a token, before Serve does anything; it fills in cfg's defaults.
func (o *ServeOptions) check(cfg *Config) error {
	if o.PoolSize < 1 || o.PoolSize > 1000 {
		return fmt.Errorf("--pool-size %d is out of range 1..1000", o.PoolSize)
	}
	if err := cfg.Check(); err != nil {
		return err
	}
	if o.HTTPAddr == "" {
		if o.HTTP.Token != "" || len(o.HTTP.AllowOrigins) > 0 {
			return errors.New("--auth-token and --allow-origin need --http")
		}
		return nil
	}
	if _, _, err := net.SplitHostPort(o.HTTPAddr); err != nil {
		return fmt.Errorf("--http %q is not host:port", o.HTTPAddr)
	}
	if !IsLoopbackAddr(o.HTTPAddr) && o.HTTP.Token == "" {
		return fmt.Errorf("--http %s is not a loopback address: set --auth-token (or MCPG_AUTH_TOKEN) to serve beyond this machine", o.HTTPAddr)
	}
	return nil
}

// closeAudit flushes a and warns about what it could not write.
func closeAudit(a *Auditor, logger *slog.Logger) {
	if err := a.Close(); err != nil {
		logger.Error("audit log write failed", "err", err)
	}
	if n := a.Dropped(); n > 0 {
		logger.Warn("audit records dropped: the log could not keep up", "dropped", n)
	}
}

// shutdownTracing exports the spans still buffered, for up to 5 s.
func shutdownTracing(tp *tracing.Provider, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		logger.Warn("trace export failed at shutdown", "err", err)
	}
}

// openPool builds the pool without connecting (ConfigureLazyPool).
func openPool(ctx context.Context, url string, size int) (*pgxpool.Pool, error) {
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("--database-url: %w", err)
	}
	pcfg.MaxConns = int32(size)
	ConfigureLazyPool(pcfg)
	return pgxpool.NewWithConfig(ctx, pcfg)
}

// checkRole is the start-up role policy: a dangerous role, or a database
// too far away to check it, is a warning, or with strict a refusal (a
// SetupError for the role, a plain error for the database).
// It returns the server's server_version_num, 0 when unreachable.
func checkRole(ctx context.Context, pool *pgxpool.Pool, strict bool, logger *slog.Logger) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, roleCheckTimeout)
	role, err := CheckRole(ctx, pool)
	cancel()
	switch {
	case err != nil && strict:
		return 0, fmt.Errorf("--strict-role: cannot check the role, database unreachable: %w", err)
	case err != nil:
		logger.Warn("database unreachable at start-up: role check skipped; serving anyway (--strict-role refuses to start)", "err", err)
	case role.Dangerous():
		if strict {
			return 0, &SetupError{fmt.Errorf("--strict-role: %s; connect as a SELECT-only role", role.Problem())}
		}
		logger.Warn("DANGEROUS DATABASE ROLE: "+role.Problem()+"; connect as a SELECT-only role (--strict-role refuses to start)",
			"role", role.Name, "superuser", role.Superuser, "risky_roles", role.Risky)
	}
	return role.ServerVersion, nil
}

// serveHTTP serves srv on addr until ctx ends, then stops accepting and
// waits up to shutdownTimeout for in-flight calls.
func serveHTTP(ctx context.Context, srv *server.MCPServer, addr string, opts HTTPOptions, stderr io.Writer, logger *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	handler := NewHTTPHandler(srv, opts)
	// Calls run under base, so that the calls still running when the
	// shutdown's time is up are cancelled (their statements with them).
	base, cancelCalls := context.WithCancel(context.Background())
	defer cancelCalls()
	hs := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(stderr, "mcpg: http: ", 0),
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	logger.Info("serving MCP over HTTP", "addr", ln.Addr().String(), "path", EndpointPath,
		"auth", opts.Token != "")
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down", "timeout", shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	hs.RegisterOnShutdown(func() { handler.CloseSessions(sctx) })
	if err := hs.Shutdown(sctx); err != nil {
		logger.Warn("calls still running after the shutdown timeout: cancelled", "timeout", shutdownTimeout)
		cancelCalls()
		hs.Close()
	}
	<-served
	return nil
}
