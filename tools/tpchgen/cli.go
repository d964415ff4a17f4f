// Command-line parsing and exit codes of tpchgen.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/qpkit/qpkit/pkg/cmdline"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // generation or I/O failed
	exitUsage = 2 // bad command line
)

// usageError is a problem with the command line; it exits 2.
type usageError struct{ error }

// cli is the command-line grammar.
type cli struct {
	Gen     genCmd     `cmd:"" default:"withargs" help:"Generate table data (the default command)."`
	DDL     ddlCmd     `cmd:"" name:"ddl" help:"Print the PostgreSQL schema."`
	Queries queriesCmd `cmd:"" help:"Print the 22 TPC-H queries for PostgreSQL."`
	Count   countCmd   `cmd:"" help:"Print each table's row count at a scale factor."`
}

// env is what commands write to.
type env struct {
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
}

const description = `Generate TPC-H data byte-identical to dbgen 2.14.0.

Without a command, tpchgen generates data: "tpchgen --sf 1 --table lineitem"
writes lineitem.tbl's bytes to stdout; "tpchgen --sf 1 --out DIR" writes all
tables (or --table) into DIR. See "tpchgen gen --help" for all flags.`

// run parses args, runs the command and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c cli
	kctx, exited, code, err := cmdline.Parse(&c, "tpchgen", description, args, stdout, stderr)
	if exited {
		return code
	}
	if err != nil {
		fmt.Fprintf(stderr, "tpchgen: %s\n", cmdline.OneLine(err.Error()))
		return exitUsage
	}
	return report(kctx.Run(&env{ctx: ctx, stdout: stdout, stderr: stderr}), stderr)
}

// report maps an error to an exit code, printing one line for it.
func report(err error, stderr io.Writer) int {
	var ue usageError
	switch {
	case err == nil, errors.Is(err, syscall.EPIPE):
		return exitOK // EPIPE: the reader went away (tpchgen | head), not a failure
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "tpchgen: %s\n", ue.Error())
		return exitUsage
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "tpchgen: interrupted")
		return exitError
	default:
		fmt.Fprintf(stderr, "tpchgen: %s\n", cmdline.OneLine(err.Error()))
		return exitError
	}
}
