// Command line, input files and exit codes of perfstat.

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"syscall"

	"github.com/qpkit/qpkit/pkg/cmdline"
	"github.com/qpkit/qpkit/pkg/perf"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // reading an input or writing the output failed
	exitInput = 2 // bad command line or bad input
)

const description = `Summarize perfrun's samples files.

perfstat reads samples files (stdin when none is named, or "-") and writes
summary.jsonl: the run record, copied, then stat, overhead and tdb records
(docs/formats.md, "Benchmark records"). --format text prints a table
instead. Several files must come from the same run (one run_id).

perfstat --compare OLD NEW compares two samples files group by group with
the two-sided Mann-Whitney U test and writes compare records; in text, "~"
marks a change that is not significant at --alpha.

The same input and --seed give byte-identical output.

Exit status: 0 success (also when the reader of the output goes away),
1 reading an input or writing the output failed, 2 bad command line or bad
input (a file that does not open, or a bad record: the message names
file:line).`

// cli is the command-line grammar; defaults match
// perf.DefaultSummaryOptions.
type cli struct {
	Seed      uint64   `help:"Base seed of the bootstrap; each group's seed is derived from it and the group." default:"1"`
	Resamples int      `help:"Bootstrap resamples per interval." default:"10000"`
	CI        float64  `name:"ci" help:"Confidence level of the intervals, in (0, 1)." default:"0.95"`
	Tolerance float64  `help:"t_db check: tolerance relative to native's p50." default:"0.10"`
	FloorNS   int64    `name:"floor-ns" help:"t_db check: absolute tolerance in nanoseconds." default:"50000"`
	Format    string   `help:"Output: json (records) or text (a table)." enum:"json,text" default:"json"`
	Compare   bool     `help:"Compare two samples files: perfstat --compare OLD NEW."`
	Alpha     float64  `help:"With --compare: significance level, in [0, 1]." default:"0.05"`
	Files     []string `arg:"" optional:"" name:"file" help:"Samples files; stdin when none, or \"-\"."`
}

// inputError is bad input or a bad command line; it exits 2.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

func inputErrorf(format string, args ...any) error {
	return &inputError{fmt.Errorf(format, args...)}
}

// run parses args, does the work and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var c cli
	_, exited, code, err := cmdline.Parse(&c, "perfstat", description, args, stdout, stderr)
	if exited {
		return code
	}
	if err != nil {
		fmt.Fprintf(stderr, "perfstat: %s\n", cmdline.OneLine(err.Error()))
		return exitInput
	}
	return report(c.run(stdin, stdout, stderr), stderr)
}

// report maps an error to an exit code, printing one line for it.
func report(err error, stderr io.Writer) int {
	var ie *inputError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, syscall.EPIPE):
		// The reader went away (perfstat | head): not a failure.
		return exitOK
	case errors.As(err, &ie):
		fmt.Fprintf(stderr, "perfstat: %s\n", cmdline.OneLine(ie.Error()))
		return exitInput
	default:
		fmt.Fprintf(stderr, "perfstat: %s\n", cmdline.OneLine(err.Error()))
		return exitError
	}
}

func (c *cli) options() perf.SummaryOptions {
	return perf.SummaryOptions{Seed: c.Seed, Resamples: c.Resamples, CILevel: c.CI, ToleranceRel: c.Tolerance, FloorNS: c.FloorNS}
}

// check refuses bad settings before any input is read.
func (c *cli) check() error {
	switch {
	case c.Resamples < 1:
		return inputErrorf("--resamples %d must be at least 1", c.Resamples)
	case !(c.CI > 0 && c.CI < 1):
		return inputErrorf("--ci %v must be between 0 and 1 (exclusive)", c.CI)
	case !(c.Tolerance >= 0) || math.IsInf(c.Tolerance, 0):
		return inputErrorf("--tolerance %v must be a number >= 0", c.Tolerance)
	case c.FloorNS < 0:
		return inputErrorf("--floor-ns %d must not be negative", c.FloorNS)
	case !(c.Alpha >= 0 && c.Alpha <= 1):
		return inputErrorf("--alpha %v must be between 0 and 1", c.Alpha)
	case c.Compare && len(c.Files) != 2:
		return inputErrorf("--compare takes two files, OLD and NEW (got %d)", len(c.Files))
	}
	stdins := 0
	for _, f := range c.Files {
		if f == "-" {
			stdins++
		}
	}
	if stdins > 1 {
		return inputErrorf(`stdin ("-") can be read only once`)
	}
	return nil
}

func (c *cli) run(stdin io.Reader, stdout, stderr io.Writer) error {
	if err := c.check(); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	out := bufio.NewWriter(stdout)
	if c.Compare {
		old, err := readSamples(c.Files[0], stdin)
		if err != nil {
			return err
		}
		newRecs, err := readSamples(c.Files[1], stdin)
		if err != nil {
			return err
		}
		cmp, err := perf.CompareRuns(old, newRecs, c.Alpha)
		if err != nil {
			return err
		}
		for _, w := range cmp.Warnings {
			log.Warn(w)
		}
		if c.Format == "text" {
			err = cmp.WriteText(out)
		} else {
			err = cmp.WriteJSON(out)
		}
		if err != nil {
			return err
		}
		return out.Flush()
	}

	files := c.Files
	if len(files) == 0 {
		files = []string{"-"}
	}
	var recs *perf.Records
	for _, name := range files {
		r, err := readSamples(name, stdin)
		if err != nil {
			return err
		}
		if recs == nil {
			recs = r
			continue
		}
		if r.Run.RunID != recs.Run.RunID {
			return inputErrorf("%s: run_id %s differs from %s's %s; summarize runs separately or use --compare",
				name, r.Run.RunID, files[0], recs.Run.RunID)
		}
		recs.Samples = append(recs.Samples, r.Samples...)
		recs.Loads = append(recs.Loads, r.Loads...)
		recs.Ends = append(recs.Ends, r.Ends...)
	}
	sum, err := perf.Summarize(recs, c.options())
	if err != nil {
		return inputErrorf("%v", err)
	}
	for _, w := range sum.Warnings {
		log.Warn(w, "run_id", recs.Run.RunID)
	}
	if c.Format == "text" {
		err = sum.WriteText(out)
	} else {
		err = sum.WriteJSON(out)
	}
	if err != nil {
		return err
	}
	return out.Flush()
}

// readSamples reads a samples file ("-" is stdin), which must start with
// a run record.
func readSamples(name string, stdin io.Reader) (*perf.Records, error) {
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, &inputError{err}
		}
		defer f.Close()
		r = f
	}
	recs, err := perf.ReadAll(r, name)
	if err != nil {
		var le *perf.LineError
		if errors.As(err, &le) {
			return nil, &inputError{err}
		}
		return nil, err // the input failed (EIO, a directory); it names the file
	}
	if recs.Run == nil {
		return nil, inputErrorf("%s: no run record; a samples file starts with one", name)
	}
	return recs, nil
}
