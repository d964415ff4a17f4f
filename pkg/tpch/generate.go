// Table generation: dbgen-style chunking and parallel generation with ordered output.

package tpch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// Generator produces TPC-H data for one scale factor. It is safe for
// concurrent use; all of its state is read-only after NewGenerator.
type Generator struct {
	c *genCtx
}

// NewGenerator interprets sf the way dbgen's -s does and prepares the
// distributions and the shared text pool (built once per process; this is
// the start-up cost, well under a second).
func NewGenerator(sf float64) (*Generator, error) {
	s, err := newScale(sf)
	if err != nil {
		return nil, err
	}
	ds, err := loadDists()
	if err != nil {
		return nil, err
	}
	pool, err := loadTextPool()
	if err != nil {
		return nil, err
	}
	return &Generator{c: &genCtx{s: s, ds: ds, pool: pool, pk64: &pk64Cache{}}}, nil
}

// ScaleFactor returns the scale factor the generator was created with.
func (g *Generator) ScaleFactor() float64 { return g.c.s.sf }

// Options control how tables are written.
type Options struct {
	// Format is the output encoding; the zero value is dbgen's tbl.
	Format Format
	// Parts and Part select the Part-th of Parts chunks (1-based), split
	// exactly as "dbgen -C Parts -S Part" splits a table: by rows of the
	// parent table (parts for partsupp, orders for lineitem), the last
	// chunk taking the remainder. Nation and region are never split; their
	// rows all go to chunk 1 so that the chunks of every table concatenate
	// to the whole table. Zero Parts means the whole table.
	Parts, Part int
	// Jobs is the number of goroutines generating rows; 0 means
	// GOMAXPROCS; more than 32 count as 32. Output bytes do not depend on it.
	Jobs int
	// Progress, if set, is called after each block is written with the
	// rows and bytes just added. Calls come from one goroutine at a time.
	Progress func(t Table, rows, bytes int64)
}

// Stats counts what was written for one table.
type Stats struct {
	Rows, Bytes int64
}

func (o Options) validate() error {
	if o.Format < FormatTbl || o.Format > FormatCSV {
		return fmt.Errorf("unknown format %d", int(o.Format))
	}
	if o.Parts < 0 || o.Jobs < 0 {
		return errors.New("parts and jobs must not be negative")
	}
	if o.Parts == 0 && o.Part != 0 {
		return fmt.Errorf("part %d given without a number of parts", o.Part)
	}
	if o.Parts > 0 && (o.Part < 1 || o.Part > o.Parts) {
		return fmt.Errorf("part %d is out of range 1..%d", o.Part, o.Parts)
	}
	return nil
}

// UnitRange returns the first unit (1-based) and the number of units of
// table t that chunk part of parts covers, where a unit is a row of the
// table except for partsupp (a part) and lineitem (an order).
func (g *Generator) UnitRange(t Table, parts, part int) (first, count int64) {
	total := g.c.s.units(t)
	if parts <= 1 {
		return 1, total
	}
	if !t.Chunked() {
		if part == 1 {
			return 1, total
		}
		return 1, 0
	}
	// dbgen's set_state: equal shares, the remainder added to the last.
	per := total / int64(parts)
	first = per*int64(part-1) + 1
	count = per
	if part == parts {
		count += total % int64(parts)
	}
	return first, count
}

// WriteTable writes table t, or the chunk Options select, to w.
func (g *Generator) WriteTable(ctx context.Context, w io.Writer, t Table, opt Options) (Stats, error) {
	st, err := g.WriteTables(ctx, []Table{t}, func(Table) (io.Writer, error) { return w, nil }, opt)
	return st[t], err
}

// WriteTables writes each of tables to the writer open returns for it,
// opened just before the table's first byte. Tables dbgen builds in one
// pass (part with partsupp, orders with lineitem) are generated once when
// both are asked for.
func (g *Generator) WriteTables(ctx context.Context, tables []Table, open func(Table) (io.Writer, error), opt Options) (map[Table]Stats, error) {
	stats := make(map[Table]Stats)
	if err := opt.validate(); err != nil {
		return stats, err
	}
	want := map[Table]bool{}
	for _, t := range tables {
		if t < Nation || t > Lineitem {
			return stats, fmt.Errorf("unknown table %d", int(t))
		}
		if want[t] {
			return stats, fmt.Errorf("table %s listed twice", t)
		}
		want[t] = true
	}
	for _, grp := range groups {
		var sinks [2]*sink
		any := false
		for i, t := range grp.tables {
			if want[t] {
				sinks[i] = &sink{t: t}
				any = true
			}
		}
		if !any {
			continue
		}
		for _, s := range sinks {
			if s == nil {
				continue
			}
			w, err := open(s.t)
			if err != nil {
				return stats, fmt.Errorf("open %s: %w", s.t, err)
			}
			s.w = w
		}
		first, count := g.UnitRange(grp.tables[0], opt.Parts, opt.Part)
		err := g.run(ctx, grp, sinks, first, count, opt)
		for _, s := range sinks {
			if s != nil {
				stats[s.t] = Stats{Rows: s.rows, Bytes: s.bytes}
			}
		}
		if err != nil {
			return stats, err
		}
	}
	return stats, nil
}

// group is a set of tables dbgen generates together from the same rows.
type group struct {
	tables []Table
	// block is how many units one work item covers: big enough to amortise
	// the skip-ahead and hand-off, small enough to bound buffered output.
	block int64
	// size estimates the bytes one unit produces per table.
	size [2]int
}

var groups = []group{
	{tables: []Table{Nation}, block: 25, size: [2]int{128}},
	{tables: []Table{Region}, block: 5, size: [2]int{128}},
	{tables: []Table{Part, PartSupp}, block: 2000, size: [2]int{130, 4 * 160}},
	{tables: []Table{Supplier}, block: 4000, size: [2]int{150}},
	{tables: []Table{Customer}, block: 4000, size: [2]int{180}},
	{tables: []Table{Orders, Lineitem}, block: 2000, size: [2]int{125, 7 * 140}},
}

// testBlock, when set by tests, overrides every group's block size so that
// block boundaries fall everywhere.
var testBlock int64

// sink is where one table's bytes go.
type sink struct {
	t     Table
	w     io.Writer
	rows  int64
	bytes int64
}

// blockBufs are the output buffers of one block, one per table of a group.
type blockBufs [2]*rowBuf

// fill generates one block; it may stop short once ctx ends (the caller
// then drops the block).
func (c *genCtx) fill(ctx context.Context, grp group, b *blockBufs, first, n int64) {
	switch grp.tables[0] {
	case Nation:
		c.genNation(b[0], first, n)
	case Region:
		c.genRegion(b[0], first, n)
	case Part:
		c.genPart(b[0], b[1], first, n)
	case Supplier:
		c.genSupplier(b[0], first, n)
	case Customer:
		c.genCustomer(b[0], first, n)
	case Orders:
		c.genOrders(ctx, b[0], b[1], first, n)
	}
}

// maxJobs caps the generating goroutines so that buffered blocks stay
// within the memory budget (about 1.5 MB per block) whatever Jobs says.
const maxJobs = 32

func (o Options) jobs() int {
	if o.Jobs > 0 {
		return o.Jobs
	}
	return runtime.GOMAXPROCS(0)
}

// run generates units first..first+count-1 of a group and writes them to
// the sinks in order. With more than one job, blocks are generated
// concurrently and written in sequence; at most jobs+4 blocks are buffered.
func (g *Generator) run(ctx context.Context, grp group, sinks [2]*sink, first, count int64, opt Options) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if testBlock > 0 {
		grp.block = testBlock
	}
	nblocks := (count + grp.block - 1) / grp.block
	newBufs := func() *blockBufs {
		var b blockBufs
		for i, s := range sinks {
			if s != nil {
				b[i] = newRowBuf(opt.Format, int(grp.block)*grp.size[i]+4096)
			}
		}
		return &b
	}
	write := func(b *blockBufs) error {
		for i, s := range sinks {
			if s == nil {
				continue
			}
			r := b[i]
			if len(r.b) > 0 {
				if _, err := s.w.Write(r.b); err != nil {
					return fmt.Errorf("write %s: %w", s.t, err)
				}
			}
			s.rows += r.rows
			s.bytes += int64(len(r.b))
			if opt.Progress != nil {
				opt.Progress(s.t, r.rows, int64(len(r.b)))
			}
		}
		return nil
	}
	blockRange := func(blk int64) (int64, int64) {
		start := first + blk*grp.block
		return start, min(grp.block, first+count-start)
	}
	jobs := int64(min(opt.jobs(), maxJobs))
	if jobs > nblocks {
		jobs = nblocks
	}
	if jobs <= 1 {
		b := newBufs()
		for blk := int64(0); blk < nblocks; blk++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			for _, r := range b {
				if r != nil {
					r.reset()
				}
			}
			start, n := blockRange(blk)
			g.c.fill(ctx, grp, b, start, n)
			if err := ctx.Err(); err != nil {
				return err // the block may be short
			}
			if err := write(b); err != nil {
				return err
			}
		}
		return nil
	}

	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type task struct {
		blk int64
		buf *blockBufs
		out chan *blockBufs
	}
	// Each worker holds one block; a few more let finished blocks wait for
	// the writer without stalling the workers.
	nbuf := int(jobs + min(jobs, 4))
	free := make(chan *blockBufs, nbuf)
	for i := 0; i < nbuf; i++ {
		free <- newBufs()
	}
	tasks := make(chan task)
	order := make(chan chan *blockBufs, nbuf)
	var wg sync.WaitGroup
	for j := int64(0); j < jobs; j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range tasks {
				for _, r := range t.buf {
					if r != nil {
						r.reset()
					}
				}
				start, n := blockRange(t.blk)
				g.c.fill(ctx, grp, t.buf, start, n)
				t.out <- t.buf
			}
		}()
	}
	// The dispatcher hands out buffers in block order, so the block the
	// writer waits for always has one and the pipeline cannot stall.
	go func() {
		defer close(tasks)
		defer close(order)
		for blk := int64(0); blk < nblocks; blk++ {
			var b *blockBufs
			select {
			case b = <-free:
			case <-ctx.Done():
				return
			}
			out := make(chan *blockBufs, 1)
			select {
			case order <- out:
			case <-ctx.Done():
				return
			}
			select {
			case tasks <- task{blk: blk, buf: b, out: out}:
			case <-ctx.Done():
				return
			}
		}
	}()
	var err error
	for out := range order {
		var b *blockBufs
		select {
		case b = <-out:
		case <-ctx.Done():
		}
		if b == nil || ctx.Err() != nil {
			err = ctx.Err() // a block that came as ctx ended may be short
			break
		}
		if err = write(b); err != nil {
			break
		}
		free <- b
	}
	cancel()
	for range order {
	}
	wg.Wait()
	if err == nil {
		// The dispatcher stops early only when the caller cancelled.
		err = parent.Err()
	}
	return err
}
