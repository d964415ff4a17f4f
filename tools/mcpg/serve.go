// The serve command: the MCP server on stdio.

package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/qpkit/qpkit/pkg/mcpserver"
	"github.com/qpkit/qpkit/pkg/pgexec"
)

type serveCmd struct {
	DatabaseURL         string   `name:"database-url" env:"MCPG_DATABASE_URL" required:"" placeholder:"URL" help:"PostgreSQL connection URL (postgres://user@host/db)."`
	StatementTimeoutMS  int      `name:"statement-timeout-ms" env:"MCPG_STATEMENT_TIMEOUT_MS" default:"30000" help:"Statement timeout in milliseconds (default: ${default})."`
	MaxRows             int      `name:"max-rows" env:"MCPG_MAX_ROWS" default:"100" help:"Most rows a query returns (default: ${default})."`
	MaxBytes            int      `name:"max-bytes" env:"MCPG_MAX_BYTES" default:"32768" help:"Largest result document in bytes (default: ${default})."`
	PoolSize            int      `name:"pool-size" env:"MCPG_POOL_SIZE" default:"4" help:"Database connections (default: ${default})."`
	AllowFunction       []string `name:"allow-function" placeholder:"NAME" help:"Also allow this function (repeatable); NAME or SCHEMA.NAME as PostgreSQL stores it."`
	AllowExplainAnalyze bool     `name:"allow-explain-analyze" help:"Allow EXPLAIN ANALYZE, which executes the statement (default: off)."`
}

// Run serves MCP on stdin/stdout until stdin closes or ctx ends. Logs go
// to stderr: stdout is the protocol.
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
	pool, err := pgexec.NewPool(e.ctx, c.DatabaseURL, c.PoolSize)
	if err != nil {
		return &failure{fmt.Errorf("connect: %w", err)}
	}
	defer pool.Close()
	cfg.Pool = pool
	srv, err := mcpserver.New(cfg)
	if err != nil {
		return &failure{err}
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
