// Command-line parsing and exit codes of mcpg.

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
	exitOK      = 0
	exitRefused = 1 // check: at least one statement was refused
	exitUsage   = 2 // bad command line or unreadable input
	exitFailure = 3 // serve: cannot connect, or the transport failed
)

// usageError is a problem with the command line or the input; it exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// failure is a runtime failure of serve; it exits 3.
type failure struct{ err error }

func (e *failure) Error() string { return e.err.Error() }
func (e *failure) Unwrap() error { return e.err }

// errRefused reports that check refused something; its records say what.
var errRefused = errors.New("refused")

// cli is the command-line grammar.
type cli struct {
	Serve serveCmd `cmd:"" help:"Serve the read-only PostgreSQL MCP tools on stdin/stdout, or on HTTP with --http (logs on stderr)."`
	Check checkCmd `cmd:"" help:"Check SQL statements against the read-only validator, one JSON line each."`
}

// env is what commands read from and write to.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

const description = `PostgreSQL MCP server tools.

Exit codes: 0 success (check: all statements allowed; serve: stdin closed,
or SIGINT/SIGTERM after in-flight HTTP calls finished),
1 check refused a statement, 2 usage error or unreadable input (serve: also
a non-loopback --http without --auth-token, or --strict-role refusing the
database role), 3 serve could not connect or its transport failed.`

// run parses args, runs the command and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var c cli
	kctx, exited, code, err := cmdline.Parse(&c, "mcpg", description, args, stdout, stderr)
	if exited {
		return code
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcpg: %s\n", cmdline.OneLine(err.Error()))
		return exitUsage
	}
	return report(kctx.Run(&env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr}), stderr)
}

// report maps an error to an exit code, printing one line for it.
func report(err error, stderr io.Writer) int {
	var ue *usageError
	var fe *failure
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errRefused):
		return exitRefused
	case errors.Is(err, syscall.EPIPE):
		return exitOK // the reader went away (mcpg check | head)
	case errors.As(err, &fe):
		fmt.Fprintf(stderr, "mcpg: %s\n", cmdline.OneLine(fe.Error()))
		return exitFailure
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "mcpg: %s\n", ue.msg)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "mcpg: %s\n", cmdline.OneLine(err.Error()))
		return exitUsage
	}
}
