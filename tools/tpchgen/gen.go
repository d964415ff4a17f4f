// The gen command: table data to stdout or into a directory.

package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/qpkit/qpkit/pkg/tpch"
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

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// checkSF rejects scale factors tpchgen does not generate.
func checkSF(sf float64) error {
	switch {
	case math.IsNaN(sf) || math.IsInf(sf, 0):
		return usagef("--sf %s is not a number", fmtFloat(sf))
	case sf <= 0:
		return usagef("--sf %s must be greater than 0", fmtFloat(sf))
	case sf > tpch.MaxScaleFactor:
		return usagef("--sf %s is larger than %s", fmtFloat(sf), fmtFloat(tpch.MaxScaleFactor))
	}
	return nil
}

// options validates the flags and turns them into generator options.
func (c *genCmd) options() ([]tpch.Table, tpch.Options, error) {
	var opt tpch.Options
	if err := checkSF(c.SF); err != nil {
		return nil, opt, err
	}
	f, err := tpch.ParseFormat(c.Format)
	if err != nil {
		return nil, opt, usagef("--format: %v", err)
	}
	opt.Format = f
	var tables []tpch.Table
	if c.Table == "" || strings.EqualFold(c.Table, "all") {
		if c.Out == "" {
			return nil, opt, usagef("--table is required when writing to stdout (or give --out DIR for all tables)")
		}
		tables = tpch.Tables
	} else {
		t, err := tpch.ParseTable(c.Table)
		if err != nil {
			return nil, opt, usagef("--table: %v", err)
		}
		tables = []tpch.Table{t}
	}
	switch {
	case c.Part != nil && c.Parts == nil:
		return nil, opt, usagef("--part requires --parts")
	case c.Parts != nil && *c.Parts < 1:
		return nil, opt, usagef("--parts %d must be at least 1", *c.Parts)
	case c.Parts != nil && c.Part == nil:
		return nil, opt, usagef("--parts requires --part (1..%d)", *c.Parts)
	case c.Parts != nil && (*c.Part < 1 || *c.Part > *c.Parts):
		return nil, opt, usagef("--part %d is out of range 1..%d", *c.Part, *c.Parts)
	}
	if c.Parts != nil {
		opt.Parts, opt.Part = *c.Parts, *c.Part
	}
	if c.Jobs < 0 {
		return nil, opt, usagef("--jobs %d must not be negative", c.Jobs)
	}
	opt.Jobs = c.Jobs
	return tables, opt, nil
}

func (c *genCmd) Run(e *env) error {
	tables, opt, err := c.options()
	if err != nil {
		return err
	}
	tpch.SetTextPoolCache(c.TextPoolCache)
	g, err := tpch.NewGenerator(c.SF)
	if err != nil {
		return err
	}
	if !c.Quiet && isTerminal(e.stderr) {
		p := startProgress(e.stderr)
		opt.Progress = p.add
		defer p.stop()
	}
	switch {
	case c.Out == "":
		_, err = g.WriteTable(e.ctx, e.stdout, tables[0], opt)
		return err
	case c.Out == os.DevNull:
		_, err = g.WriteTables(e.ctx, tables, func(tpch.Table) (io.Writer, error) { return io.Discard, nil }, opt)
		return err
	default:
		return c.writeFiles(e, g, tables, opt)
	}
}

// writeFiles writes each table to a temporary file in --out and renames
// it into place only when every table succeeded; on failure no new or
// partial file is left behind.
func (c *genCmd) writeFiles(e *env, g *tpch.Generator, tables []tpch.Table, opt tpch.Options) error {
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	type pending struct {
		f     *os.File
		final string
	}
	var files []pending
	open := func(t tpch.Table) (io.Writer, error) {
		name := t.String() + "." + opt.Format.Ext()
		if opt.Parts > 0 {
			name += "." + strconv.Itoa(opt.Part)
		}
		f, err := os.CreateTemp(c.Out, "."+name+".tmp-*")
		if err != nil {
			return nil, err
		}
		files = append(files, pending{f, filepath.Join(c.Out, name)})
		if err := f.Chmod(0o644); err != nil {
			return nil, err
		}
		return f, nil
	}
	_, err := g.WriteTables(e.ctx, tables, open, opt)
	for _, p := range files {
		if cerr := p.f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", p.final, cerr)
		}
	}
	if err == nil {
		for i, p := range files {
			if rerr := os.Rename(p.f.Name(), p.final); rerr != nil {
				err = rerr
				files = files[i:]
				break
			}
		}
		if err == nil {
			return nil
		}
	}
	for _, p := range files {
		os.Remove(p.f.Name())
	}
	return err
}
