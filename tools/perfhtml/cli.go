// Command line, input, output and exit codes of perfhtml.

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/qpkit/qpkit/pkg/cmdline"
	"github.com/qpkit/qpkit/pkg/perf"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // reading or writing failed
	exitUsage = 2 // bad command line or bad record
)

// cli is the command-line grammar.
type cli struct {
	File string `arg:"" optional:"" default:"-" placeholder:"FILE" help:"Summary to read (perfstat's output); - reads stdin (the default)."`
	Out  string `short:"o" placeholder:"FILE" help:"Write the page to FILE instead of stdout; a regular FILE (or a link's target) is replaced only when the page is complete, a device such as /dev/null is written."`
}

const description = `Render a perfstat summary as one self-contained HTML page.

"perfhtml < summary.jsonl > perf.html" or "perfhtml summary.jsonl -o perf.html".
The page needs no network: CSS and SVG charts are inline. It shows the run's
provenance, latency per query and path with confidence intervals, throughput
and latency by concurrency, the server path's segments, the overhead over
native and the t_db check.

Exit status: 0 done; 1 reading or writing failed; 2 bad command line or a bad
record (the message names file:line).`

// badInput marks errors that exit with exitUsage.
type badInput struct{ err error }

func (e *badInput) Error() string { return e.err.Error() }
func (e *badInput) Unwrap() error { return e.err }

// run parses args, renders and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var c cli
	_, exited, code, err := cmdline.Parse(&c, "perfhtml", description, args, stdout, stderr)
	if exited {
		return code
	}
	if err != nil {
		fmt.Fprintf(stderr, "perfhtml: %s\n", cmdline.OneLine(err.Error()))
		return exitUsage
	}
	return report(c.render(stdin, stdout), stderr)
}

// render reads the summary and writes the page.
func (c *cli) render(stdin io.Reader, stdout io.Writer) error {
	in, name := stdin, "-"
	if c.File != "-" {
		f, err := os.Open(c.File)
		if err != nil {
			return err
		}
		defer f.Close()
		in, name = f, c.File
	}
	recs, err := perf.ReadAll(in, name)
	if err != nil {
		var le *perf.LineError
		if errors.As(err, &le) {
			return &badInput{err}
		}
		return err
	}
	var page bytes.Buffer
	if err := perf.RenderHTML(&page, recs); err != nil {
		return err
	}
	if c.Out == "" {
		_, err := stdout.Write(page.Bytes())
		return err
	}
	return writeFile(c.Out, page.Bytes())
}

// writeFile writes data to path. A regular file, or a missing one, is
// replaced through a temporary file in its directory, so a reader never
// sees half a page; a symlink is resolved first, so the link stays and its
// target is replaced. Anything else (/dev/null, a terminal, a FIFO) is
// opened and written: a rename would replace the node itself.
func writeFile(path string, data []byte) error {
	target, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			// A dangling link, or one like /dev/stdout -> /proc/self/fd/1
			// -> "pipe:[…]" that only the kernel resolves: write through it.
			return writeInPlace(path, data)
		}
		target, err = path, nil
	}
	if err != nil {
		return err
	}
	if fi, err := os.Stat(target); err == nil && !fi.Mode().IsRegular() {
		return writeInPlace(target, data)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), target)
}

// writeInPlace opens path (creating it if need be) and writes data to it.
func writeInPlace(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// report maps an error to an exit code, printing one line for it.
func report(err error, stderr io.Writer) int {
	var bi *badInput
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, syscall.EPIPE):
		// The reader went away (perfhtml | head): not a failure.
		return exitOK
	case errors.As(err, &bi):
		fmt.Fprintf(stderr, "perfhtml: %s\n", cmdline.OneLine(err.Error()))
		return exitUsage
	default:
		fmt.Fprintf(stderr, "perfhtml: %s\n", cmdline.OneLine(err.Error()))
		return exitError
	}
}
