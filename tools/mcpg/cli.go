// Command-line parsing and exit codes of mcpg.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/alecthomas/kong"
)

// Exit codes.
const (
	exitOK      = 0
	exitRefused = 1 // check: at least one statement was refused
	exitUsage   = 2 // bad command line or unreadable input
)

// usageError is a problem with the command line or the input; it exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// errRefused reports that check refused something; its records say what.
var errRefused = errors.New("refused")

// cli is the command-line grammar; "serve" joins "check" later.
type cli struct {
	Check checkCmd `cmd:"" help:"Check SQL statements against the read-only validator, one JSON line each."`
}

// env is what commands read from and write to.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// exitPanic carries kong's exit request (after --help) out of Parse.
type exitPanic struct{ code int }

const description = `PostgreSQL MCP server tools.

Exit codes: 0 all statements allowed, 1 a statement was refused,
2 usage error or unreadable input.`

// run parses args, runs the command and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	var c cli
	parser, err := kong.New(&c,
		kong.Name("mcpg"),
		kong.Description(description),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(exitPanic{code}) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
	)
	if err != nil {
		fmt.Fprintf(stderr, "mcpg: %v\n", err)
		return exitUsage
	}
	defer func() {
		if r := recover(); r != nil {
			ep, ok := r.(exitPanic)
			if !ok {
				panic(r)
			}
			code = ep.code
		}
	}()
	kctx, err := parser.Parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "mcpg: %s\n", oneLine(err.Error()))
		return exitUsage
	}
	return report(kctx.Run(&env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr}), stderr)
}

// report maps an error to an exit code, printing one line for it.
func report(err error, stderr io.Writer) int {
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errRefused):
		return exitRefused
	case errors.Is(err, syscall.EPIPE):
		return exitOK // the reader went away (mcpg check | head)
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "mcpg: %s\n", ue.msg)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "mcpg: %s\n", oneLine(err.Error()))
		return exitUsage
	}
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
