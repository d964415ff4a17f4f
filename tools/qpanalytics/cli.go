// Command line, config file and exit codes of qpanalytics.

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/alecthomas/kong"

	"github.com/qpkit/qpkit/pkg/cmdline"
)

// Exit codes.
const (
	exitOK       = 0
	exitError    = 1 // the work failed (database, file, server)
	exitUsage    = 2 // bad command line or config file
	exitMismatch = 3 // verify found a table that differs
	exitSignal   = 130
)

// cli is the command line. Every flag is also an environment variable and
// a key of the --config file (the flag name with dashes as underscores);
// the command line wins over the environment, which wins over the file.
type cli struct {
	Config   kong.ConfigFlag `help:"TOML file with any of these settings (keys as flag names with underscores)." placeholder:"FILE" env:"QPANALYTICS_CONFIG"`
	LogLevel string          `help:"debug, info, warn or error." default:"info" enum:"debug,info,warn,error" env:"QPANALYTICS_LOG_LEVEL"`

	Snapshot snapshotCmd `cmd:"" help:"Copy PostgreSQL tables into a DuckDB file, consistently, replacing it atomically."`
	Verify   verifyCmd   `cmd:"" help:"Compare row counts and checksums of the DuckDB copy with PostgreSQL."`
	Serve    serveCmd    `cmd:"" help:"Answer SQL on the DuckDB copy over the PostgreSQL wire protocol."`
}

const description = `A DuckDB columnar copy of PostgreSQL tables, served over the PostgreSQL
wire protocol for analytical queries.

  qpanalytics snapshot --source URL --tables lineitem,orders --target tpch.duckdb
  qpanalytics verify   --source URL --target tpch.duckdb
  qpanalytics serve    --db tpch.duckdb --listen 127.0.0.1:5433

Exit codes: 0 ok, 1 failure, 2 bad usage, 3 verify found a difference,
130 interrupted (a snapshot then leaves the previous copy in place).`

// env is what every command's Run gets: where to write, and the logger.
type env struct {
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
	log    *slog.Logger
	// ready, when not nil, is told the address serve listens on.
	ready func(addr string)
}

// usageError marks a failure that is the caller's input, for exit code 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// mismatchError marks a verify that ran and found differences.
type mismatchError struct{ tables []string }

func (e *mismatchError) Error() string {
	return fmt.Sprintf("the copy differs from PostgreSQL in %d table(s): %v", len(e.tables), e.tables)
}

// parse reads args (and the config file they name) into a command.
func parse(args []string, stdout, stderr io.Writer) (*kong.Context, *cli, bool, int, error) {
	c := &cli{}
	kctx, exited, code, err := cmdline.Parse(c, "qpanalytics", description, args, stdout, stderr,
		kong.Configuration(cmdline.TOMLResolver))
	return kctx, c, exited, code, err
}
