// The check command: its flags, the statements read (pkg/sqlcheck) and their records written.

package main

import (
	"strings"

	"github.com/qpkit/qpkit/pkg/safesql"
	"github.com/qpkit/qpkit/pkg/sqlcheck"
)

type checkCmd struct {
	Files               []string `arg:"" optional:"" name:"file" help:"SQL files to check; none or - reads stdin."`
	JSONL               bool     `name:"jsonl" help:"Input is JSON lines, one {\"sql\": \"...\"} object per line, instead of SQL text split at top-level semicolons."`
	AllowFunction       []string `name:"allow-function" placeholder:"NAME" help:"Also allow this function (repeatable); NAME or SCHEMA.NAME as PostgreSQL stores it."`
	AllowExplainAnalyze bool     `name:"allow-explain-analyze" help:"Allow EXPLAIN ANALYZE, which executes the statement."`
	MaxLength           int      `name:"max-length" default:"65536" help:"Longest statement in bytes."`
	MaxDepth            int      `name:"max-depth" default:"64" help:"Deepest bracket nesting (at most 1000)."`
	ServerVersion       int      `name:"server-version" default:"150000" placeholder:"NUM" help:"The server's server_version_num: SQL/JSON syntax and functions of a newer release are refused (default: ${default}, PostgreSQL 15)."`
}

func (c *checkCmd) Run(e *env) error {
	if c.MaxLength < 1 {
		return usagef("--max-length %d must be at least 1", c.MaxLength)
	}
	if c.ServerVersion < 150000 || c.ServerVersion >= 1000000 {
		return usagef("--server-version %d is out of range 150000..999999 (server_version_num, 150018 for 15.18)", c.ServerVersion)
	}
	if c.MaxDepth < 1 || c.MaxDepth > 1000 {
		return usagef("--max-depth %d is out of range 1..1000", c.MaxDepth)
	}
	v, err := safesql.New(safesql.Options{
		AllowExplainAnalyze: c.AllowExplainAnalyze,
		AllowFunctions:      c.AllowFunction,
		MaxLength:           c.MaxLength,
		MaxDepth:            c.MaxDepth,
		ServerVersion:       c.ServerVersion,
	})
	if err != nil {
		return usagef("%s", strings.TrimPrefix(err.Error(), "safesql: "))
	}
	files := c.Files
	if len(files) == 0 {
		files = []string{"-"}
	}
	stmts, err := sqlcheck.Read(files, c.JSONL, e.stdin)
	if err != nil {
		return usagef("%s", err)
	}
	refused, err := sqlcheck.CheckAll(e.stdout, v, stmts)
	if err != nil {
		return err
	}
	if refused {
		return errRefused
	}
	return nil
}
