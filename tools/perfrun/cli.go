// Flags, wiring and exit codes of perfrun.

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/cmdline"
	"github.com/qpkit/qpkit/pkg/perf"
	prun "github.com/qpkit/qpkit/pkg/perf/run"
	"golang.org/x/term"
)

const (
	exitOK          = 0
	exitFailure     = 1 // the database or a path failed
	exitUsage       = 2
	exitInterrupted = 130
)

type cli struct {
	DatabaseURL   string        `name:"database-url" env:"DATABASE_URL" required:"" help:"PostgreSQL to measure (a TPC-H database for the default queries)."`
	Paths         []string      `name:"paths" default:"native,server,e2e-inproc,e2e-stdio,e2e-http" help:"Paths to run (default: ${default})."`
	Queries       string        `name:"queries" placeholder:"FILE" help:"Query-set file, JSON lines of {id,weight,size,sql}; default the built-in set."`
	Only          []string      `name:"only" placeholder:"ID,..." help:"Run only these query ids."`
	Iterations    int           `name:"iterations" short:"n" default:"20" help:"Timed calls per query and path (default: ${default})."`
	Warmup        int           `name:"warmup" default:"5" help:"Discarded calls after the cold one (default: ${default})."`
	Concurrency   []int         `name:"concurrency" default:"1,4,16,64" help:"Client counts of the sweep on the point lookup; empty skips it (default: ${default})."`
	SweepDuration time.Duration `name:"sweep-duration" default:"2s" help:"Measured time per sweep level (default: ${default})."`
	Timeout       time.Duration `name:"timeout" default:"60s" help:"Per-call timeout, also the statement timeout (default: ${default})."`
	MCPG          string        `name:"mcpg" placeholder:"PATH" help:"The mcpg binary for e2e-stdio (default: mcpg next to perfrun, then on PATH)."`
	Out           string        `name:"out" short:"o" placeholder:"FILE" help:"Write samples to FILE instead of stdout."`
	Resume        bool          `name:"resume" help:"Continue the interrupted --out FILE: keep its whole units, run the rest."`
}

const description = `Time queries over paths and write samples as JSON lines.

perfrun --database-url URL > samples.jsonl; perfstat < samples.jsonl | perfhtml > perf.html

Exit codes: 0 done, 1 a database or path failure, 2 usage, 130 interrupted
(what was measured is kept; --resume continues it).`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c cli
	_, exited, code, err := cmdline.Parse(&c, "perfrun", description, args, stdout, stderr)
	if exited {
		return code
	}
	if err != nil {
		fmt.Fprintf(stderr, "perfrun: %s\n", cmdline.OneLine(err.Error()))
		return exitUsage
	}
	code, err = c.run(ctx, args, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "perfrun: %s\n", cmdline.OneLine(err.Error()))
	}
	return code
}

func (c *cli) run(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	switch {
	case c.Iterations < 1 || c.Warmup < 0:
		return exitUsage, errors.New("--iterations must be at least 1 and --warmup at least 0")
	case c.Timeout < time.Millisecond:
		return exitUsage, errors.New("--timeout must be at least 1ms")
	case c.SweepDuration < 100*time.Millisecond && len(c.Concurrency) > 0:
		return exitUsage, errors.New("--sweep-duration must be at least 100ms")
	case c.Resume && c.Out == "":
		return exitUsage, errors.New("--resume needs --out FILE")
	}
	for _, n := range c.Concurrency {
		if n < 1 || n > 10000 {
			return exitUsage, fmt.Errorf("--concurrency %d is out of range 1..10000", n)
		}
	}
	for _, p := range c.Paths {
		if !slices.Contains(prun.PathNames, p) {
			return exitUsage, fmt.Errorf("--paths: unknown path %q (known: %s)", p, strings.Join(prun.PathNames, ", "))
		}
	}
	queries := prun.DefaultQueries()
	if c.Queries != "" {
		f, err := os.Open(c.Queries)
		if err != nil {
			return exitUsage, err
		}
		queries, err = prun.ReadQueries(f, c.Queries)
		f.Close()
		if err != nil {
			return exitUsage, err
		}
	}
	if len(c.Only) > 0 {
		var kept []prun.Query
		for _, q := range queries {
			if slices.Contains(c.Only, q.ID) {
				kept = append(kept, q)
			}
		}
		if len(kept) != len(c.Only) {
			return exitUsage, fmt.Errorf("--only %s: unknown query id", strings.Join(c.Only, ","))
		}
		queries = kept
	}
	mcpg := c.MCPG
	if mcpg == "" && slices.Contains(c.Paths, "e2e-stdio") {
		mcpg = findMCPG()
		if mcpg == "" {
			return exitUsage, errors.New("e2e-stdio needs the mcpg binary: pass --mcpg PATH or drop the path with --paths")
		}
	}

	conn, err := pgx.Connect(ctx, c.DatabaseURL)
	if err != nil {
		return exitFailure, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.Background())
	sweep := len(c.Concurrency) > 0 && (slices.Contains(c.Paths, "native") || slices.Contains(c.Paths, "server"))
	if sweep {
		if err := prun.CheckConnections(ctx, conn, slices.Max(c.Concurrency)+2); err != nil {
			return exitFailure, err
		}
	}

	// The output: stdout, a new file, or the kept part of an interrupted one.
	var out io.Writer = stdout
	var done map[prun.Unit]bool
	var runID string
	if c.Out != "" {
		f, id, d, err := c.openOut()
		if err != nil {
			return exitUsage, err
		}
		defer f.Close()
		out, runID, done = f, id, d
	}
	var progress io.Writer
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) || os.Getenv("PERFRUN_PROGRESS") == "1" {
		progress = stderr
	}
	cfg := prun.Config{
		Settings: prun.Settings{DatabaseURL: c.DatabaseURL, Timeout: c.Timeout, MaxRows: prun.DefaultMaxRows,
			MaxBytes: prun.DefaultMaxBytes, MCPG: mcpg},
		Paths: c.Paths, Queries: queries, Iterations: c.Iterations, Warmup: c.Warmup,
		Concurrency: c.Concurrency, SweepDuration: c.SweepDuration, SweepWarmup: 300 * time.Millisecond,
		Progress: progress, Done: done,
	}
	if !sweep {
		cfg.Concurrency = nil
	}
	if runID == "" {
		runID = newRunID(time.Now())
		w := perf.NewWriter(out, runID)
		if err := w.Write(c.runRecord(ctx, conn, args, cfg)); err != nil {
			return exitFailure, err
		}
	}
	r := prun.NewRunner(cfg, out, runID)
	err = r.Latency(ctx)
	if err == nil {
		err = r.Sweep(ctx)
	}
	interrupted := ctx.Err() != nil
	end := &perf.End{FinishedAt: time.Now().UTC(), Interrupted: interrupted, Samples: r.Samples()}
	if werr := perf.NewWriter(out, runID).Write(end); werr != nil && err == nil {
		err = werr
	}
	switch {
	case interrupted:
		return exitInterrupted, fmt.Errorf("interrupted after %d samples; whole units are kept", r.Samples())
	case errors.Is(err, syscall.EPIPE):
		return exitOK, nil
	case err != nil:
		return exitFailure, err
	}
	return exitOK, nil
}

// openOut creates --out, or with --resume rewrites it to its whole units
// and returns its run id and what is done.
func (c *cli) openOut() (*os.File, string, map[prun.Unit]bool, error) {
	if !c.Resume {
		f, err := os.OpenFile(c.Out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		return f, "", nil, err
	}
	res, err := prun.ReadResume(c.Out)
	if err != nil {
		return nil, "", nil, fmt.Errorf("--resume: %w", err)
	}
	tmp := c.Out + ".resume"
	if err := os.WriteFile(tmp, res.Kept, 0o644); err != nil {
		return nil, "", nil, err
	}
	if err := os.Rename(tmp, c.Out); err != nil {
		return nil, "", nil, err
	}
	f, err := os.OpenFile(c.Out, os.O_WRONLY|os.O_APPEND, 0)
	return f, res.Run.RunID, res.Done, err
}

func (c *cli) runRecord(ctx context.Context, conn *pgx.Conn, args []string, cfg prun.Config) *perf.Run {
	pg, err := prun.PostgresInfo(ctx, conn)
	if err != nil {
		pg.Version = "unknown: " + err.Error()
	}
	qs := make([]perf.Query, len(cfg.Queries))
	for i, q := range cfg.Queries {
		qs[i] = perf.Query{ID: q.ID, Weight: q.Weight, Size: q.Size, SQL: q.SQL}
	}
	return &perf.Run{
		StartedAt: time.Now().UTC(), Tool: prun.ToolInfo("perfrun"), Host: prun.HostInfo(), Postgres: pg,
		ScaleFactor: prun.ScaleFactor(ctx, conn), Iterations: cfg.Iterations, Warmup: cfg.Warmup,
		TimeoutMS: cfg.Timeout.Milliseconds(), Concurrency: cfg.Concurrency,
		SweepDurationNS: cfg.SweepDuration.Nanoseconds(), Paths: cfg.Paths, Queries: qs,
		Args: append([]string{"perfrun"}, redact(args)...),
	}
}

// redact hides a password in a database URL among args.
func redact(args []string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if cfg, err := pgx.ParseConfig(a); err == nil && cfg.Password != "" && strings.Contains(a, cfg.Password) {
			out[i] = strings.ReplaceAll(a, cfg.Password, "xxxxx")
		}
	}
	return out
}

func newRunID(t time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// findMCPG looks for mcpg next to this binary, then on PATH.
func findMCPG() string {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "mcpg")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	if p, err := execLookPath("mcpg"); err == nil {
		return p
	}
	return ""
}
