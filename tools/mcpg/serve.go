// The serve command: its flags, checked, as mcpserver.ServeOptions.

package main

import (
	"errors"
	"time"

	"github.com/qpkit/qpkit/pkg/mcpserver"
)

type serveCmd struct {
	DatabaseURL         string   `name:"database-url" env:"MCPG_DATABASE_URL" required:"" placeholder:"URL" help:"PostgreSQL connection URL (postgres://user@host/db)."`
	StatementTimeoutMS  int      `name:"statement-timeout-ms" env:"MCPG_STATEMENT_TIMEOUT_MS" default:"30000" help:"Statement timeout in milliseconds (default: ${default})."`
	AcquireTimeoutMS    int      `name:"acquire-timeout-ms" env:"MCPG_ACQUIRE_TIMEOUT_MS" default:"30000" help:"How long a call waits for a database connection while all --pool-size are busy, in milliseconds; then it fails with a try-again-later error (default: ${default})."`
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
	NoFastPath          bool     `name:"no-fast-path" env:"MCPG_NO_FAST_PATH" help:"Serve every request through mcp-go's own dispatch, also the tools/call requests of protocol 2026-07-28 that mcpg otherwise answers itself; slower, for comparisons or as a way out (default: off)."`
}

// Run serves MCP on stdin/stdout until stdin closes or ctx ends, or with
// --http on HTTP until ctx ends (mcpserver.Serve). Logs go to stderr:
// under stdio, stdout is the protocol.
func (c *serveCmd) Run(e *env) error {
	// Zero would mean the default to mcpserver.Config, not to the flags.
	if c.StatementTimeoutMS < 1 {
		return usagef("--statement-timeout-ms %d must be at least 1", c.StatementTimeoutMS)
	}
	if c.AcquireTimeoutMS < 1 {
		return usagef("--acquire-timeout-ms %d must be at least 1", c.AcquireTimeoutMS)
	}
	if c.MaxRows < 1 {
		return usagef("--max-rows %d must be at least 1", c.MaxRows)
	}
	if c.MaxBytes < 1 {
		return usagef("--max-bytes %d must be at least 1", c.MaxBytes)
	}
	err := mcpserver.Serve(e.ctx, mcpserver.ServeOptions{
		Config: mcpserver.Config{
			StatementTimeout:    time.Duration(c.StatementTimeoutMS) * time.Millisecond,
			AcquireTimeout:      time.Duration(c.AcquireTimeoutMS) * time.Millisecond,
			MaxRows:             c.MaxRows,
			MaxBytes:            c.MaxBytes,
			AllowFunctions:      c.AllowFunction,
			AllowExplainAnalyze: c.AllowExplainAnalyze,
			RateLimit:           c.RateLimit,
			PrincipalRateLimit:  c.PrincipalRateLimit,
			FenceResults:        c.FenceResults,
			DisableFastPath:     c.NoFastPath,
		},
		DatabaseURL: c.DatabaseURL, PoolSize: c.PoolSize,
		HTTPAddr: c.HTTP, HTTP: mcpserver.HTTPOptions{Token: c.AuthToken, AllowOrigins: c.AllowOrigin},
		AuditLog: c.AuditLog, StrictRole: c.StrictRole,
		Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr,
	})
	var se *mcpserver.SetupError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return usagef("%s", se.Err)
	default:
		return &failure{err}
	}
}
