// The gen command: table data to stdout or into a directory.

package main

import (
	"os"
	"time"

	"github.com/qpkit/qpkit/pkg/progress"
	"github.com/qpkit/qpkit/pkg/tpch"
	"golang.org/x/term"
)

type genCmd struct {
	SF     float64 `name:"sf" default:"1" help:"Scale factor, read as dbgen -s reads it: below 1 row counts scale by whole thousandths; from 1 up only the integer part counts (1.5 gives SF 1)."`
	Table  string  `name:"table" placeholder:"NAME" help:"Table to write: nation, region, part, supplier, partsupp, customer, orders or lineitem. Required for stdout; with --out, the default (or \"all\") is every table."`
	Format string  `name:"format" default:"tbl" placeholder:"FMT" help:"tbl (dbgen's bytes, trailing '|'), copy (PostgreSQL COPY text) or csv (RFC 4180)."`
	Parts  *int    `name:"parts" placeholder:"N" help:"Split each table into N chunks as dbgen -C N does (by parts for partsupp, by orders for lineitem). Needs --part."`
	Part   *int    `name:"part" placeholder:"K" help:"Write chunk K of N, as dbgen -C N -S K. Chunks 1..N concatenate to the whole table; nation and region are not split and go whole into chunk 1."`
	Jobs   int     `name:"jobs" default:"0" placeholder:"J" help:"Goroutines generating rows; 0 means one per CPU. Output bytes never depend on it."`
	Out    string  `name:"out" placeholder:"DIR" help:"Write <table>.<format> files (<table>.<format>.<K> for a chunk) into DIR, each via a temporary file renamed when complete. --out /dev/null discards the data (for timing)."`
	Quiet  bool    `name:"quiet" short:"q" help:"No progress display (it is shown only when stderr is a terminal)."`

	TextPoolCache string `name:"text-pool-cache" env:"TPCHGEN_TEXT_POOL_CACHE" placeholder:"FILE" help:"Map the 300 MiB text pool from FILE, or build it and write it there; saves about 0.8 CPU-seconds in every later process (scripts/load-tpch uses it). Put it on tmpfs and delete it when done."`
}

func (c *genCmd) Run(e *env) error {
	req := tpch.Request{SF: c.SF, Table: c.Table, Format: c.Format, Parts: c.Parts, Part: c.Part, Jobs: c.Jobs, Dir: c.Out}
	tables, opt, err := req.Check()
	if err != nil {
		return usageError{err}
	}
	tpch.SetTextPoolCache(c.TextPoolCache)
	g, err := tpch.NewGenerator(c.SF)
	if err != nil {
		return err
	}
	// The meter starts once the text pool is built, so its rate is the
	// generation rate; it shows only on a terminal.
	if f, ok := e.stderr.(*os.File); ok && !c.Quiet && term.IsTerminal(int(f.Fd())) {
		var tally tpch.Tally
		opt.Progress = tally.Add
		defer progress.Start(e.stderr, 250*time.Millisecond, tally.Line).Stop()
	}
	if c.Out == "" {
		_, err = g.WriteTable(e.ctx, e.stdout, tables[0], opt)
		return err
	}
	return g.WriteDir(e.ctx, c.Out, tables, opt)
}
