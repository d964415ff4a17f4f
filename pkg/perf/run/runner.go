// The loops: per query and path a cold call, a discarded warm-up and N
// timed calls; then the concurrency sweep on the point lookup.

package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"time"

	"github.com/qpkit/qpkit/pkg/perf"
)

// Config is one perfrun run.
type Config struct {
	Settings
	Paths      []string
	Queries    []Query
	Iterations int
	Warmup     int
	// MinTime, when above 0, keeps a query's paths taking turns after the
	// Iterations until the timed calls of the unit have run this long (at
	// most maxIterations): cheap queries then get enough samples for
	// stable medians, heavy ones stay at Iterations.
	MinTime       time.Duration
	Concurrency   []int
	SweepDuration time.Duration
	SweepWarmup   time.Duration
	// Progress, when set, gets one line per finished unit.
	Progress io.Writer
	// Done lists units already in the output (--resume): they are skipped.
	Done map[Unit]bool
}

// Unit is what is written in one burst: one (path, query) latency run, or
// one (path, query, concurrency) level of the sweep.
type Unit struct {
	Path, Query string
	Concurrency int // 0 for a latency unit
}

// timeoutGrace lets the server's statement timeout, equal to the call
// timeout, fire before the client gives up, so a slow statement ends as a
// clean timeout error instead of a closed connection.
const timeoutGrace = time.Second

// gcLimit is the heap size above which the loops collect between calls;
// the collector is otherwise off while a call is timed.
const gcLimit = 256 << 20

// maxIterations bounds the iterations MinTime adds.
const maxIterations = 5000

// Runner writes the records of a run as it goes.
type Runner struct {
	cfg     Config
	out     io.Writer // each unit is one Write
	runID   string
	samples int64
}

// NewRunner writes units to out under runID.
func NewRunner(cfg Config, out io.Writer, runID string) *Runner {
	return &Runner{cfg: cfg, out: out, runID: runID}
}

// Samples returns how many samples were written.
func (r *Runner) Samples() int64 { return r.samples }

// Latency runs every query on every path, skipping done units. The paths
// of one query take turns call by call (native, server, e2e-inproc, ...,
// then again), so that a noisy machine shifts them alike; each path has
// its own connection or session, opened fresh for the query so that its
// first call is the cold one.
func (r *Runner) Latency(ctx context.Context) error {
	old := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(old)
	for _, q := range r.cfg.Queries {
		var paths []Path
		for _, name := range r.cfg.Paths {
			if r.cfg.Done[Unit{Path: name, Query: q.ID}] {
				continue
			}
			p, err := NewPath(name, r.cfg.Settings)
			if err != nil {
				return err
			}
			paths = append(paths, p)
		}
		if len(paths) == 0 {
			continue
		}
		t0 := time.Now()
		samples, err := r.latencyUnit(ctx, paths, q)
		for _, p := range paths {
			p.Close()
		}
		if err != nil {
			return err
		}
		if err := r.flush(samples, nil); err != nil {
			return err
		}
		for _, p := range paths {
			r.progress("%-14s %-12s p50 %v", q.ID, p.Name(), p50(samples, p.Name()))
		}
		r.progress("%-14s %d paths x %d samples (%v)", q.ID, len(paths), len(samples)/len(paths), time.Since(t0).Round(time.Millisecond))
	}
	return nil
}

// latencyUnit times one query on its paths: a cold call on each fresh
// connection, the warm-up, then the iterations, the paths taking turns
// in an order that reverses every other iteration.
func (r *Runner) latencyUnit(ctx context.Context, paths []Path, q Query) ([]*perf.Sample, error) {
	for _, p := range paths {
		if err := p.Open(ctx); err != nil {
			return nil, err
		}
	}
	var out []*perf.Sample
	for _, p := range paths {
		out = append(out, r.timed(ctx, p, q, perf.PhaseCold, 0))
	}
	for range r.cfg.Warmup {
		for _, p := range paths {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			r.timed(ctx, p, q, perf.PhaseWarm, 0)
		}
	}
	start := time.Now()
	reversed := slices.Clone(paths)
	slices.Reverse(reversed)
	for i := 0; i < r.cfg.Iterations || (i < maxIterations && time.Since(start) < r.cfg.MinTime); i++ {
		turn := paths
		if i%2 == 1 {
			turn = reversed // no path always goes first: perfstat's paired estimate relies on it
		}
		for _, p := range turn {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			out = append(out, r.timed(ctx, p, q, perf.PhaseWarm, i))
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err() // the last call was cut off: not a whole unit
	}
	return out, nil
}

// timed makes one call with the timeout and returns its sample. The heap
// is collected before the clock starts when it has grown large.
func (r *Runner) timed(ctx context.Context, p Path, q Query, phase string, iter int) *perf.Sample {
	if heapLive() > gcLimit {
		runtime.GC()
	}
	cctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout+timeoutGrace)
	t0 := time.Now()
	res, err := p.Call(cctx, q.SQL)
	dur := time.Since(t0)
	cancel()
	s := sample(p.Name(), q.ID, phase, 1, iter, 0, dur, res, err)
	if err != nil && ctx.Err() == nil {
		// A failed call may leave a path unusable (a connection closed
		// by a cancel): start afresh, untimed, for the next one.
		p.Open(ctx)
	}
	return s
}

// heapLive is the bytes in heap objects, read without stopping the world
// (runtime.ReadMemStats stops it, and so would perturb the next call).
func heapLive() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func sample(path, query, phase string, conc, iter, client int, dur time.Duration, res Result, err error) *perf.Sample {
	s := &perf.Sample{Path: path, Query: query, Phase: phase, Concurrency: conc, Iter: iter, Client: client,
		Status: perf.StatusOK, DurNS: dur.Nanoseconds(), Rows: int64(res.Rows), ResultBytes: int64(res.Bytes)}
	switch {
	case errors.Is(err, ErrTimeout):
		s.Status, s.Error = perf.StatusTimeout, oneLine(err.Error())
	case err != nil:
		s.Status, s.Error = perf.StatusError, oneLine(err.Error())
	}
	if t := res.Timing; t != nil {
		seg := func(d time.Duration) *int64 { n := d.Nanoseconds(); return &n }
		s.TParseNS, s.TPoolNS, s.TTxnNS, s.TDBNS, s.TSerializeNS = seg(t.Parse), seg(t.Pool), seg(t.Txn), seg(t.DB), seg(t.Serialize)
		s.TSerializeOverlapNS = seg(t.SerializeOverlap)
	}
	return s
}

func oneLine(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '\n' || c == '\r' || c == '\t' {
			b[i] = ' '
		}
	}
	if len(b) > 500 {
		b = append(b[:497], "..."...)
	}
	return string(b)
}

// flush writes a unit's records in one Write, so that an interrupted run
// keeps whole units only (almost always; --resume drops a torn one).
func (r *Runner) flush(samples []*perf.Sample, load *perf.Load) error {
	var buf bytes.Buffer
	w := perf.NewWriter(&buf, r.runID)
	for _, s := range samples {
		if err := w.Write(s); err != nil {
			return err
		}
	}
	if load != nil {
		if err := w.Write(load); err != nil {
			return err
		}
	}
	if _, err := r.out.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write samples: %w", err)
	}
	r.samples += int64(len(samples))
	return nil
}

func (r *Runner) progress(format string, args ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, "perfrun: "+format+"\n", args...)
	}
}

// p50 is the median warm duration of path's samples ("" for all), for
// the progress lines.
func p50(s []*perf.Sample, path string) time.Duration {
	var d []int64
	for _, x := range s {
		if x.Phase == perf.PhaseWarm && x.Status == perf.StatusOK && (path == "" || x.Path == path) {
			d = append(d, x.DurNS)
		}
	}
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return time.Duration(d[len(d)/2]).Round(time.Microsecond)
}

// SweepRounds is how many turns native and server take at each level of
// the sweep: the level's measured time is split into this many rounds,
// the paths alternating (native first in even rounds, server first in odd
// ones), so that the machine's noise hits both alike, as the latency
// units' turns do.
const SweepRounds = 4

// Sweep runs the point lookup at each concurrency level on native and
// server, each given as many connections as clients, in turns
// (SweepRounds).
func (r *Runner) Sweep(ctx context.Context) error {
	var q *Query
	for i := range r.cfg.Queries {
		if r.cfg.Queries[i].ID == PointLookup {
			q = &r.cfg.Queries[i]
		}
	}
	if q == nil || len(r.cfg.Concurrency) == 0 {
		return nil
	}
	per := r.cfg.SweepDuration / SweepRounds
	for _, level := range r.cfg.Concurrency {
		var names []string
		for _, name := range r.cfg.Paths {
			if (name == "native" || name == "server") && !r.cfg.Done[Unit{Path: name, Query: q.ID, Concurrency: level}] {
				names = append(names, name)
			}
		}
		samples := map[string][]*perf.Sample{}
		loads := map[string]*perf.Load{}
		for round := range SweepRounds {
			order := slices.Clone(names)
			if round%2 == 1 {
				slices.Reverse(order)
			}
			for _, name := range order {
				if err := ctx.Err(); err != nil {
					return err
				}
				s, load, err := r.level(ctx, name, *q, level, per, len(samples[name]))
				if err != nil {
					return err
				}
				samples[name] = append(samples[name], s...)
				if sum := loads[name]; sum != nil {
					sum.DurationNS += load.DurationNS
					sum.Requests += load.Requests
					sum.Errors += load.Errors
					sum.Timeouts += load.Timeouts
				} else {
					loads[name] = load
				}
			}
		}
		for _, name := range names {
			s, load := samples[name], loads[name]
			sortSamples(s)
			// Each client's calls, numbered 0, 1, ... across the turns.
			next := map[int]int{}
			for _, x := range s {
				x.Iter = next[x.Client]
				next[x.Client]++
			}
			med := p50(s, "") // before level 1 drops its samples
			if level == 1 {
				// Latency at one client is the latency unit's; level 1
				// adds only its throughput, so that samples of one
				// (path, query, phase, concurrency) come from one loop.
				s = nil
			}
			if err := r.flush(s, load); err != nil {
				return err
			}
			rps := float64(load.Requests) / time.Duration(load.DurationNS).Seconds()
			r.progress("sweep %-8s %3d clients: %8.0f req/s, p50 %v, %d errors", name, level, rps, med, load.Errors+load.Timeouts)
		}
	}
	return nil
}

// caller is one client's call of the point lookup; buf is its scratch
// buffer, returned for the next call.
type caller func(ctx context.Context, buf []byte) (Result, []byte, error)

// level runs q with level concurrent clients on a fresh set of
// connections of path name: after SweepWarmup of unrecorded calls, for
// dur while every call is recorded. Each client's samples are numbered
// from iterBase on.
func (r *Runner) level(ctx context.Context, name string, q Query, level int, dur time.Duration, iterBase int) ([]*perf.Sample, *perf.Load, error) {
	callers := make([]caller, level)
	var closers []func() error
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	switch name {
	case "native":
		for i := range callers {
			p := &nativePath{s: r.cfg.Settings}
			if err := p.Open(ctx); err != nil {
				return nil, nil, err
			}
			closers = append(closers, p.Close)
			callers[i] = func(ctx context.Context, buf []byte) (Result, []byte, error) {
				res, err := p.Call(ctx, q.SQL)
				return res, buf, err
			}
		}
	case "server":
		p := &serverPath{s: r.cfg.Settings}
		if err := p.openPool(ctx, level); err != nil {
			return nil, nil, err
		}
		closers = append(closers, p.Close)
		for i := range callers {
			callers[i] = func(ctx context.Context, buf []byte) (Result, []byte, error) {
				return p.call(ctx, q.SQL, buf)
			}
		}
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		all      []*perf.Sample
		errs     int64
		timeouts int64
	)
	start := time.Now()
	measureFrom := start.Add(r.cfg.SweepWarmup)
	end := measureFrom.Add(dur)
	for i, call := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			var mine []*perf.Sample
			var e, to int64
			for iter := iterBase; ctx.Err() == nil; {
				cctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout+timeoutGrace)
				t0 := time.Now()
				var res Result
				var err error
				res, buf, err = call(cctx, buf)
				t1 := time.Now()
				cancel()
				if t1.After(end) {
					break
				}
				if t0.Before(measureFrom) {
					continue
				}
				s := sample(name, q.ID, perf.PhaseWarm, level, iter, i, t1.Sub(t0), res, err)
				switch s.Status {
				case perf.StatusError:
					e++
				case perf.StatusTimeout:
					to++
				}
				mine = append(mine, s)
				iter++
			}
			mu.Lock()
			all = append(all, mine...)
			errs += e
			timeouts += to
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	load := &perf.Load{Path: name, Query: q.ID, Concurrency: level, DurationNS: dur.Nanoseconds(),
		Requests: int64(len(all)), Errors: errs, Timeouts: timeouts, Conns: level}
	return all, load, nil
}
