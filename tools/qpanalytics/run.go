package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"golang.org/x/term"

	"github.com/qpkit/qpkit/pkg/cmdline"
)

// run parses args, runs the command and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runReady(ctx, args, stdout, stderr, nil)
}

// runReady is run with a hook told serve's bound address (tests listen
// on port 0).
func runReady(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(addr string)) int {
	kctx, c, exited, code, err := parse(args, stdout, stderr)
	if exited {
		return code
	}
	if err != nil {
		fmt.Fprintf(stderr, "qpanalytics: %s\n", cmdline.OneLine(err.Error()))
		return exitUsage
	}
	var level slog.Level
	level.UnmarshalText([]byte(c.LogLevel))
	e := &env{ctx: ctx, stdout: stdout, stderr: stderr, ready: ready,
		log: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))}
	err = kctx.Run(e)
	var ue *usageError
	var me *mismatchError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "qpanalytics: %s\n", cmdline.OneLine(err.Error()))
		return exitUsage
	case errors.As(err, &me):
		fmt.Fprintf(stderr, "qpanalytics: %s\n", err)
		return exitMismatch
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		fmt.Fprintf(stderr, "qpanalytics: interrupted\n")
		return exitSignal
	default:
		fmt.Fprintf(stderr, "qpanalytics: %s\n", cmdline.OneLine(err.Error()))
		return exitError
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// writeFileAtomic writes text to path through a temporary file and a
// rename, so a script polling for the file never reads half of it.
func writeFileAtomic(path, text string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ready-*")
	if err != nil {
		return err
	}
	if _, err := tmp.WriteString(text); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
