// The three commands: snapshot, verify and serve.

package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/qpkit/qpkit/pkg/duckwire"
	"github.com/qpkit/qpkit/pkg/hba"
	"github.com/qpkit/qpkit/pkg/pgwire"
	"github.com/qpkit/qpkit/pkg/snapshot"
)

type snapshotCmd struct {
	Source       string        `help:"PostgreSQL to copy from (URL or DSN)." required:"" env:"QPANALYTICS_SOURCE" placeholder:"URL"`
	Tables       []string      `help:"Tables to copy (schema.table or table in public), comma separated." required:"" env:"QPANALYTICS_TABLES" placeholder:"T,..."`
	Target       string        `help:"DuckDB file to create or replace atomically." required:"" env:"QPANALYTICS_TARGET" placeholder:"FILE"`
	Strategy     string        `help:"appender (DuckDB Appender) or parquet (parallel Parquet files, then one load)." default:"appender" enum:"appender,parquet" env:"QPANALYTICS_STRATEGY"`
	Readers      int           `help:"Parallel PostgreSQL readers (0: chosen from the CPU count)." default:"0" env:"QPANALYTICS_READERS"`
	Writers      int           `help:"Parallel writers (0: chosen from the CPU count)." default:"0" env:"QPANALYTICS_WRITERS"`
	Compression  string        `help:"fast (no FSST compression of strings: much less writer CPU, a file about 2x larger; dictionaries for strings with few distinct values) or full (every DuckDB method: the smallest file, slower to write)." default:"fast" enum:"full,fast" env:"QPANALYTICS_COMPRESSION"`
	ScratchDir   string        `help:"Directory for the parquet strategy's files (default: the target's)." env:"QPANALYTICS_SCRATCH_DIR" placeholder:"DIR"`
	TextFallback bool          `help:"Copy columns with no exact DuckDB type (unconstrained numeric, composite and extension types, ...) as their PostgreSQL text instead of refusing the table." env:"QPANALYTICS_TEXT_FALLBACK"`
	Verify       bool          `help:"Check counts and checksums inside the snapshot before replacing the target." env:"QPANALYTICS_VERIFY"`
	Progress     string        `help:"Progress lines on stderr: auto (when it is a terminal), always or never." default:"auto" enum:"auto,always,never" env:"QPANALYTICS_PROGRESS"`
	Interval     time.Duration `help:"Progress interval." default:"500ms" env:"QPANALYTICS_INTERVAL,QPANALYTICS_PROGRESS_INTERVAL"`
}

func (c *snapshotCmd) Run(e *env) error {
	opts := snapshot.Options{
		SourceURL:     c.Source,
		Tables:        splitList(c.Tables),
		Target:        c.Target,
		Strategy:      snapshot.Strategy(c.Strategy),
		Readers:       c.Readers,
		Writers:       c.Writers,
		ScratchDir:    c.ScratchDir,
		Compression:   snapshot.Compression(c.Compression),
		TextFallback:  c.TextFallback,
		Verify:        c.Verify,
		ProgressEvery: c.Interval,
		Logger:        e.log,
	}
	if c.Readers < 0 || c.Writers < 0 {
		return &usageError{fmt.Errorf("--readers and --writers must be 0 (auto) or more")}
	}
	if len(opts.Tables) == 0 {
		return &usageError{fmt.Errorf("--tables names no table")}
	}
	if c.Progress == "always" || (c.Progress == "auto" && isTerminal(e.stderr)) {
		opts.Progress = e.stderr
	}
	res, err := snapshot.Run(e.ctx, opts)
	if err != nil {
		return err
	}
	return json.NewEncoder(e.stdout).Encode(res.Record(c.Verify))
}

type verifyCmd struct {
	Source string   `help:"PostgreSQL the copy was taken from." required:"" env:"QPANALYTICS_SOURCE" placeholder:"URL"`
	Target string   `help:"The DuckDB copy." required:"" env:"QPANALYTICS_TARGET" placeholder:"FILE"`
	Tables []string `help:"Tables to check (default: every table of the snapshot)." env:"QPANALYTICS_TABLES" placeholder:"T,..."`
}

func (c *verifyCmd) Run(e *env) error {
	checks, err := snapshot.Verify(e.ctx, snapshot.VerifyOptions{SourceURL: c.Source, Target: c.Target,
		Tables: splitList(c.Tables), Logger: e.log})
	if err != nil {
		return err
	}
	enc := json.NewEncoder(e.stdout)
	var bad []string
	for _, ch := range checks {
		if !ch.Match {
			bad = append(bad, ch.Schema+"."+ch.Name)
		}
		if err := enc.Encode(ch.Record()); err != nil {
			return err
		}
	}
	if len(bad) > 0 {
		return &mismatchError{bad}
	}
	return nil
}

type serveCmd struct {
	DB              string        `name:"db" help:"The DuckDB copy to serve (opened read-only)." required:"" env:"QPANALYTICS_DB" placeholder:"FILE"`
	Listen          string        `help:"Address clients connect to." default:"127.0.0.1:5433" env:"QPANALYTICS_LISTEN"`
	Admin           string        `help:"Address of /healthz and /metrics (empty: off)." env:"QPANALYTICS_ADMIN" placeholder:"HOST:PORT"`
	AuthFile        string        `help:"pgbouncer-style userlist: lines \"user\" \"password|md5...|SCRAM-SHA-256$...\". Without it every client is trusted." env:"QPANALYTICS_AUTH_FILE" placeholder:"FILE"`
	AuthHBAFile     string        `name:"auth-hba-file" help:"Rules in pg_hba.conf's format choosing each client's method (trust, reject, md5, scram-sha-256, password) by connection type, database, user and address, as qprouter's --auth-hba-file; passwords come from --auth-file." env:"QPANALYTICS_AUTH_HBA_FILE" placeholder:"FILE"`
	TLSCert         string        `name:"tls-cert" help:"PEM certificate for client TLS (with --tls-key)." env:"QPANALYTICS_TLS_CERT" placeholder:"FILE"`
	TLSKey          string        `name:"tls-key" help:"PEM private key of --tls-cert." env:"QPANALYTICS_TLS_KEY" placeholder:"FILE"`
	RequireTLS      bool          `name:"require-tls" help:"Refuse clients that do not use TLS." env:"QPANALYTICS_REQUIRE_TLS"`
	MaxClients      int           `help:"Client sessions at once (0: the default)." default:"0" env:"QPANALYTICS_MAX_CLIENTS"`
	Threads         int           `help:"DuckDB threads (0: DuckDB's default, one per CPU)." default:"0" env:"QPANALYTICS_THREADS"`
	MemoryLimit     string        `help:"DuckDB memory_limit, e.g. 4GB (empty: DuckDB's default)." env:"QPANALYTICS_MEMORY_LIMIT"`
	ShutdownTimeout time.Duration `help:"On SIGTERM, let running queries finish this long before canceling them." default:"10s" env:"QPANALYTICS_SHUTDOWN_TIMEOUT"`
	ReadyFile       string        `help:"Write the bound address (HOST:PORT) into FILE once listening (for scripts using port 0)." env:"QPANALYTICS_READY_FILE" placeholder:"FILE"`
}

func (c *serveCmd) Run(e *env) error {
	auth, err := pgwire.FileConfig(c.AuthFile, c.TLSCert, c.TLSKey, c.RequireTLS)
	if err != nil {
		return &usageError{err}
	}
	if c.AuthHBAFile != "" {
		rs, err := hba.Load(c.AuthHBAFile)
		if err == nil {
			err = rs.Check(hba.Server{Secrets: c.AuthFile != "", SecretsHint: "give --auth-file to take passwords from",
				CAHint: "qpanalytics does not verify client certificates", IdentHint: "qpanalytics has no user name maps"})
		}
		if err != nil {
			return &usageError{err}
		}
		for _, n := range rs.Notes {
			e.log.Warn(n)
		}
		auth.Rules = pgwire.HBARules(func() *hba.Rules { return rs }, nil)
	}
	return duckwire.Serve(e.ctx, duckwire.Config{
		Database:      c.DB,
		Listen:        c.Listen,
		Admin:         c.Admin,
		Auth:          auth,
		MaxClients:    c.MaxClients,
		Threads:       c.Threads,
		MemoryLimit:   c.MemoryLimit,
		ShutdownGrace: c.ShutdownTimeout,
		Log:           e.log,
		Ready: func(addr, admin string) {
			e.log.Info("serving", "listen", addr, "admin", admin, "db", c.DB)
			if c.ReadyFile != "" {
				if err := writeFileAtomic(c.ReadyFile, addr); err != nil {
					e.log.Error("ready file", "err", err)
				}
			}
			if e.ready != nil {
				e.ready(addr)
			}
		},
	})
}

// splitList accepts both repeated flags and comma lists.
func splitList(in []string) []string {
	var out []string
	for _, s := range in {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}
