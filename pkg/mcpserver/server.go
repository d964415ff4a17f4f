// Package mcpserver is mcpg's MCP server: five read-only tools (run_select,
// explain_query, list_schemas, list_tables, describe_table) over a
// PostgreSQL pool, every statement going through the safesql validator and
// the pgexec executor, with optional per-session and per-principal rate
// limits, audit log (Auditor), Prometheus metrics (Metrics) and tracing.
//
// Serve is the whole of `mcpg serve`: settings checked, pool, role check,
// audit log, tracing, then stdio or HTTP until the context ends. Its parts
// are exported too: New builds an *server.MCPServer from
// github.com/mark3labs/mcp-go; serve it on streamable HTTP with
// NewHTTPHandler (bearer token, Origin check), on stdio with Serve (or
// server.NewStdioServer(s).Listen, without the fast path), or talk to it
// in-process with client.NewInProcessClient(s) in tests. A tools/call of
// the 2026-07-28 protocol skips mcp-go's dispatch (fastpath.go). CheckRole
// tells whether the pool's role is more powerful than it should be. See
// docs/mcpg.md.
package mcpserver

import (
	"cmp"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/qpkit/qpkit/pkg/pgexec"
	"github.com/qpkit/qpkit/pkg/safesql"
)

// Config is every setting of the server with its default. Zero values take
// the defaults.
type Config struct {
	// Pool is the connection pool; required. The caller owns it and closes
	// it after the server is done (pgexec.NewPool sets the read-only
	// session defaults).
	Pool *pgxpool.Pool
	// StatementTimeout bounds each statement; default 30 s.
	StatementTimeout time.Duration
	// AcquireTimeout bounds a call's wait for a pool connection while all
	// are busy; default 30 s. The call then fails with a "try again later"
	// tool error.
	AcquireTimeout time.Duration
	// MaxRows is the most rows run_select returns; default 100. A call's
	// max_rows may lower it, never raise it.
	MaxRows int
	// MaxBytes bounds each result document; default 32768.
	MaxBytes int
	// AllowFunctions adds functions to the validator's allowlist.
	AllowFunctions []string
	// AllowExplainAnalyze lets EXPLAIN ANALYZE through the validator and
	// explain_query's analyze argument.
	AllowExplainAnalyze bool
	// ServerVersion is the server's server_version_num, for the validator
	// (safesql.Options.ServerVersion): SQL/JSON syntax and functions newer
	// than the server are refused. 0: PostgreSQL 15. Serve sets it from
	// the server at start-up.
	ServerVersion int
	// Logger receives one record per tool call; nil discards them. It must
	// not write to the protocol stream (stdout under stdio).
	Logger *slog.Logger
	// RateLimit is the calls per second each MCP session may make (a token
	// bucket with burst max(1, RateLimit)); 0, the default, is no limit.
	RateLimit float64
	// PrincipalRateLimit is the calls per second all sessions of one
	// principal (auth token owner) may make together; 0 means RateLimit.
	PrincipalRateLimit float64
	// Audit, when non-nil, receives one record per tool call. The caller
	// owns it and closes it after the server is done.
	Audit *Auditor
	// Metrics, when non-nil, counts and times every tool call (NewMetrics).
	Metrics *Metrics
	// FenceResults wraps run_select's result text in
	// <untrusted-data id=RANDOM>...</untrusted-data id=RANDOM> markers, with
	// a note that the content is data, not instructions.
	FenceResults bool
	// Tracer, when non-nil, starts one span per tool call with the
	// executor's timing segments as attributes (see pkg/tracing).
	Tracer trace.Tracer
	// Version is reported to clients at initialize; default "dev".
	Version string
	// DisableFastPath serves every message through mcp-go's dispatch,
	// also the tools/call requests the fast path would answer (see
	// fastpath.go and docs/mcpg.md, "Fast path"): for comparisons, or to
	// add tool middleware to the server.
	DisableFastPath bool
}

// Limits of Check.
const (
	maxMaxRows  = 100000
	minMaxBytes = 1024
	maxMaxBytes = 256 << 20
)

// Check fills in defaults and refuses out-of-range settings; it needs no
// pool, so a command line can be checked before connecting.
func (c *Config) Check() error {
	if c.StatementTimeout == 0 {
		c.StatementTimeout = pgexec.DefaultStatementTimeout
	}
	if c.AcquireTimeout == 0 {
		c.AcquireTimeout = pgexec.DefaultAcquireTimeout
	}
	if c.MaxRows == 0 {
		c.MaxRows = pgexec.DefaultMaxRows
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = pgexec.DefaultMaxBytes
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	switch {
	case c.StatementTimeout < time.Millisecond || c.StatementTimeout.Milliseconds() > 1<<31-1:
		return fmt.Errorf("statement timeout %v is out of range 1ms..2147483647ms", c.StatementTimeout)
	case c.AcquireTimeout < time.Millisecond:
		return fmt.Errorf("acquire timeout %v is under 1ms", c.AcquireTimeout)
	case c.MaxRows < 1 || c.MaxRows > maxMaxRows:
		return fmt.Errorf("max rows %d is out of range 1..%d", c.MaxRows, maxMaxRows)
	case c.RateLimit < 0 || c.RateLimit > 1e6 || math.IsNaN(c.RateLimit):
		return fmt.Errorf("rate limit %v is out of range 0..1000000", c.RateLimit)
	case c.PrincipalRateLimit < 0 || c.PrincipalRateLimit > 1e6 || math.IsNaN(c.PrincipalRateLimit):
		return fmt.Errorf("principal rate limit %v is out of range 0..1000000", c.PrincipalRateLimit)
	case c.MaxBytes < minMaxBytes || c.MaxBytes > maxMaxBytes:
		return fmt.Errorf("max bytes %d is out of range %d..%d", c.MaxBytes, minMaxBytes, maxMaxBytes)
	}
	if _, err := c.validator(); err != nil {
		return err
	}
	return nil
}

func (c *Config) validator() (*safesql.Validator, error) {
	return safesql.New(safesql.Options{
		AllowExplainAnalyze: c.AllowExplainAnalyze,
		AllowFunctions:      c.AllowFunctions,
		ServerVersion:       c.ServerVersion,
	})
}

// handler holds what the tools share.
type handler struct {
	cfg       Config
	validator *safesql.Validator
	log       *slog.Logger
	catalog   *pgexec.Executor // the catalog tools' executor
	limits    rateLimits
	cursors   *cursorKeys // signs run_select's cursors

	mu  sync.Mutex
	run map[int]*pgexec.Executor // run_select's executors by row limit
}

// catalogMaxRows bounds the catalog tools' listings
// (1,600 is PostgreSQL's most columns per table, so describe_table shows
// every column of any table unless the byte cap cuts it).
const catalogMaxRows = 1600

// New checks cfg and returns the MCP server with its tools registered.
// Unless cfg.DisableFastPath, NewHTTPHandler and Serve answer the
// 2026-07-28 tools/call requests of its tools on the fast path
// (fastpath.go), which does not run tool middleware: add none to the
// server (MCPServer.Use) without DisableFastPath.
func New(cfg Config) (*server.MCPServer, error) {
	s, _, err := build(cfg)
	return s, err
}

// build is New, also returning the tools' handler.
func build(cfg Config) (*server.MCPServer, *handler, error) {
	if cfg.Pool == nil {
		return nil, nil, errors.New("mcpserver: Config.Pool is required")
	}
	if err := cfg.Check(); err != nil {
		return nil, nil, fmt.Errorf("mcpserver: %w", err)
	}
	v, err := cfg.validator()
	if err != nil {
		return nil, nil, fmt.Errorf("mcpserver: %w", err)
	}
	h := &handler{cfg: cfg, validator: v, log: cfg.Logger, run: map[int]*pgexec.Executor{},
		cursors: newCursorKeys()}
	h.limits.session = newLimiters(cfg.RateLimit)
	h.limits.principal = newLimiters(cmp.Or(cfg.PrincipalRateLimit, cfg.RateLimit))
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	// The catalog listings may be longer than a query result, not larger.
	h.catalog, err = pgexec.New(cfg.Pool, v, pgexec.Options{
		MaxRows:          catalogMaxRows,
		MaxBytes:         max(cfg.MaxBytes, 256<<10),
		StatementTimeout: cfg.StatementTimeout,
		AcquireTimeout:   cfg.AcquireTimeout,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("mcpserver: %w", err)
	}
	if _, err := h.executor(cfg.MaxRows); err != nil {
		return nil, nil, fmt.Errorf("mcpserver: %w", err)
	}
	opts := []server.ServerOption{
		server.WithToolCapabilities(false),
		server.WithInstructions("Read-only PostgreSQL. Explore with list_schemas, list_tables, describe_table; query with run_select; see plans with explain_query."),
	}
	var fast *fastPath
	if !cfg.DisableFastPath {
		var hooks *server.Hooks
		if fast, hooks, err = newFastPath(mcp.Implementation{Name: serverName, Version: cfg.Version}); err != nil {
			return nil, nil, fmt.Errorf("mcpserver: %w", err)
		}
		opts = append(opts, server.WithHooks(hooks))
	}
	s := server.NewMCPServer(serverName, cfg.Version, opts...)
	h.register(s)
	if fast != nil {
		registerFastPath(s, fast)
	}
	return s, h, nil
}

// serverName is the name the server reports to clients.
const serverName = "mcpg"

// executor returns run_select's executor for a row limit, building it on
// first use (at most MaxRows of them exist).
func (h *handler) executor(maxRows int) (*pgexec.Executor, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ex, ok := h.run[maxRows]; ok {
		return ex, nil
	}
	ex, err := pgexec.New(h.cfg.Pool, h.validator, pgexec.Options{
		MaxRows:          maxRows,
		MaxBytes:         h.cfg.MaxBytes,
		StatementTimeout: h.cfg.StatementTimeout,
		AcquireTimeout:   h.cfg.AcquireTimeout,
	})
	if err != nil {
		return nil, err
	}
	h.run[maxRows] = ex
	return ex, nil
}
