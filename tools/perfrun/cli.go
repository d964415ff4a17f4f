// Flags, wiring and exit codes of perfrun.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"github.com/qpkit/qpkit/pkg/cmdline"
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
	MinTime       time.Duration `name:"min-time" default:"0s" help:"Keep timing a query past --iterations until its timed calls took this long in all, at most 5000 per path: more samples for cheap queries (default: ${default}, off)."`
	Concurrency   []int         `name:"concurrency" default:"1,4,16,64" help:"Client counts of the sweep on the point lookup; empty skips it (default: ${default})."`
	SweepDuration time.Duration `name:"sweep-duration" default:"4s" help:"Measured time per path at each sweep level, split into turns that alternate native and server (default: ${default})."`
	Timeout       time.Duration `name:"timeout" default:"60s" help:"Per-call timeout, also the statement timeout (default: ${default})."`
	MCPG          string        `name:"mcpg" placeholder:"PATH" help:"The mcpg binary for e2e-stdio (default: mcpg next to perfrun, then on PATH)."`
	MCPProtocol   string        `name:"mcp-protocol" default:"${mcp_protocol}" help:"MCP protocol version the e2e paths' client asks for: the official TypeScript SDK's newest by default, or 2026-07-28 (default: ${default})."`
	Out           string        `name:"out" short:"o" placeholder:"FILE" help:"Write samples to FILE instead of stdout."`
	Resume        bool          `name:"resume" help:"Continue the interrupted (or failed) --out FILE with the same settings: keep its whole units, run the rest."`
}

const description = `Time queries over paths and write samples as JSON lines.

perfrun --database-url URL > samples.jsonl; perfstat < samples.jsonl | perfhtml > perf.html

Exit codes: 0 done, 1 a database or path failure, 2 usage, 130 interrupted
(what was measured is kept; --resume continues it).`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c cli
	_, exited, code, err := cmdline.Parse(&c, "perfrun", description, args, stdout, stderr, kong.Vars{"mcp_protocol": prun.DefaultMCPProtocol})
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
	var progress io.Writer
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) || os.Getenv("PERFRUN_PROGRESS") == "1" {
		progress = stderr
	}
	s := prun.Study{
		Config: prun.Config{
			Settings: prun.Settings{DatabaseURL: c.DatabaseURL, Timeout: c.Timeout, MaxRows: prun.DefaultMaxRows,
				MaxBytes: prun.DefaultMaxBytes, MCPG: c.MCPG, MCPProtocol: c.MCPProtocol},
			Paths: c.Paths, Iterations: c.Iterations, Warmup: c.Warmup, MinTime: c.MinTime,
			Concurrency: c.Concurrency, SweepDuration: c.SweepDuration, SweepWarmup: 300 * time.Millisecond,
			Progress: progress,
		},
		QueryFile: c.Queries, Only: c.Only, Out: c.Out, Resume: c.Resume, Args: args,
	}
	_, err := s.Run(ctx, stdout)
	var ue *prun.UsageError
	switch {
	case err == nil, errors.Is(err, syscall.EPIPE):
		return exitOK, nil
	case errors.Is(err, prun.ErrInterrupted):
		return exitInterrupted, err
	case errors.As(err, &ue):
		return exitUsage, err
	}
	return exitFailure, err
}
