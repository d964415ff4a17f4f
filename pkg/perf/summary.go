// Summary of a samples file: stat, overhead and tdb records (perfstat).

package perf

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/qpkit/qpkit/pkg/stats"
)

// SummaryOptions are perfstat's settings. Every one is written into the
// records it affects, so a reader can recompute them.
type SummaryOptions struct {
	Seed         uint64  // base seed of the bootstraps; see GroupSeed
	Resamples    int     // bootstrap resamples per interval
	CILevel      float64 // confidence level of the intervals, in (0, 1)
	ToleranceRel float64 // tdb: relative tolerance of t_db against native
	FloorNS      int64   // tdb: absolute tolerance in nanoseconds
}

// DefaultSummaryOptions are perfstat's defaults.
func DefaultSummaryOptions() SummaryOptions {
	return SummaryOptions{Seed: 1, Resamples: 10000, CILevel: 0.95, ToleranceRel: 0.10, FloorNS: 50000}
}

// Check reports the first setting out of range.
func (o SummaryOptions) Check() error {
	switch {
	case o.Resamples < 1:
		return fmt.Errorf("resamples %d must be at least 1", o.Resamples)
	case !(o.CILevel > 0 && o.CILevel < 1):
		return fmt.Errorf("ci %v must be between 0 and 1", o.CILevel)
	case !(o.ToleranceRel >= 0) || math.IsInf(o.ToleranceRel, 0):
		return fmt.Errorf("tolerance %v must be a number >= 0", o.ToleranceRel)
	case o.FloorNS < 0:
		return fmt.Errorf("floor-ns %d must not be negative", o.FloorNS)
	}
	return nil
}

// GroupKey names a group of samples.
type GroupKey struct {
	Path, Query, Phase string
	Concurrency        int
}

func (k GroupKey) String() string {
	return fmt.Sprintf("%s %s %s c=%d", k.Query, k.Path, k.Phase, k.Concurrency)
}

// GroupSeed is the bootstrap seed of a group: the base seed mixed with the
// 64-bit FNV-1a hash of "path\x00query\x00phase\x00concurrency" (the
// concurrency in decimal) by the SplitMix64 finalizer, that is
// splitmix64(seed XOR fnv). It depends only on the base seed and the group,
// never on the order groups are met in. A stat record carries it in its
// seed field: stats.BootstrapQuantileCI(ok dur_ns, 0.5, ci_level,
// resamples, seed) gives p50_ci_ns back, and the overhead record of the
// same group uses stats.BootstrapQuantileDiffCI(native, path, 0.5, ...)
// with the path group's seed.
func GroupSeed(seed uint64, k GroupKey) uint64 {
	h := fnv.New64a()
	io.WriteString(h, k.Path)
	h.Write([]byte{0})
	io.WriteString(h, k.Query)
	h.Write([]byte{0})
	io.WriteString(h, k.Phase)
	h.Write([]byte{0})
	io.WriteString(h, strconv.Itoa(k.Concurrency))
	return splitMix64(seed ^ h.Sum64())
}

func splitMix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// groupOrdering sorts groups: by the run's query list, then its path list
// (names it does not list come after, by name), then cold before warm, then
// concurrency.
type groupOrdering struct {
	query, path map[string]int
}

func newGroupOrdering(run *Run) groupOrdering {
	o := groupOrdering{query: map[string]int{}, path: map[string]int{}}
	if run != nil {
		for i, q := range run.Queries {
			o.query[q.ID] = i
		}
		for i, p := range run.Paths {
			if _, dup := o.path[p]; !dup {
				o.path[p] = i
			}
		}
	}
	return o
}

func rankedCompare(rank map[string]int, a, b string) int {
	ra, oka := rank[a]
	rb, okb := rank[b]
	switch {
	case oka && okb:
		return ra - rb
	case oka:
		return -1
	case okb:
		return 1
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func phaseRank(p string) int {
	if p == PhaseCold {
		return 0
	}
	return 1
}

func (o groupOrdering) compare(a, b GroupKey) int {
	if c := rankedCompare(o.query, a.Query, b.Query); c != 0 {
		return c
	}
	if c := rankedCompare(o.path, a.Path, b.Path); c != 0 {
		return c
	}
	if c := phaseRank(a.Phase) - phaseRank(b.Phase); c != 0 {
		return c
	}
	return a.Concurrency - b.Concurrency
}

// sampleGroup is the samples of one group.
type sampleGroup struct {
	key      GroupKey
	ok       []float64 // dur_ns of the ok samples, in input order
	tdb      []float64 // t_db_ns of the ok samples that carry it
	segs     [5][]float64
	overlap  []float64       // t_serialize_overlap_ns of the ok samples that carry it
	byIter   map[int]float64 // dur_ns by iteration, at concurrency 1 only (for pairing)
	own      []float64       // dur_ns - t_db_ns of the ok samples that carry t_db
	hasSegs  bool
	timeouts int
	errors   int
}

// groupSamples groups samples, returning the groups in ordering order.
func groupSamples(samples []Sample, ord groupOrdering) []*sampleGroup {
	byKey := map[GroupKey]*sampleGroup{}
	var groups []*sampleGroup
	for i := range samples {
		s := &samples[i]
		k := GroupKey{s.Path, s.Query, s.Phase, s.Concurrency}
		g := byKey[k]
		if g == nil {
			g = &sampleGroup{key: k}
			byKey[k] = g
			groups = append(groups, g)
		}
		switch s.Status {
		case StatusOK:
		case StatusTimeout:
			g.timeouts++
			continue
		default:
			g.errors++
			continue
		}
		g.ok = append(g.ok, float64(s.DurNS))
		if s.Concurrency == 1 {
			if g.byIter == nil {
				g.byIter = map[int]float64{}
			}
			if _, dup := g.byIter[s.Iter]; !dup {
				g.byIter[s.Iter] = float64(s.DurNS)
			}
		}
		for j, seg := range [5]*int64{s.TParseNS, s.TPoolNS, s.TTxnNS, s.TDBNS, s.TSerializeNS} {
			if seg != nil {
				g.hasSegs = true
				g.segs[j] = append(g.segs[j], float64(*seg))
			}
		}
		if s.TDBNS != nil {
			g.tdb = append(g.tdb, float64(*s.TDBNS))
			g.own = append(g.own, float64(s.DurNS-*s.TDBNS))
		}
		if s.TSerializeOverlapNS != nil {
			g.overlap = append(g.overlap, float64(*s.TSerializeOverlapNS))
		}
	}
	slices.SortFunc(groups, func(a, b *sampleGroup) int { return ord.compare(a.key, b.key) })
	return groups
}

// roundNS rounds a duration to whole nanoseconds, saturating at int64's
// ends; NaN (an empty sample) becomes 0, which the record's warnings
// explain.
func roundNS(x float64) int64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x >= math.MaxInt64: // 2^63 and more: int64 would wrap negative
		return math.MaxInt64
	case x <= math.MinInt64:
		return math.MinInt64
	}
	return int64(math.Round(x))
}

func roundInterval(iv stats.Interval) [2]int64 {
	return [2]int64{roundNS(iv.Lo), roundNS(iv.Hi)}
}

// loadTotal is the load records of one (path, query, concurrency), summed
// (a resumed run may have written a level twice).
type loadTotal struct {
	durationNS, requests, failed int64
	used                         bool
}

type loadKey struct {
	path, query string
	concurrency int
}

func (l *loadTotal) rps() (float64, bool) {
	if l == nil || l.durationNS <= 0 {
		return 0, false
	}
	return float64(l.requests) / (float64(l.durationNS) / 1e9), true
}

// Summary is perfstat's result for one samples file.
type Summary struct {
	Run *Run
	// RunRaw is the run record's line as read; WriteJSON copies it.
	RunRaw  []byte
	Options SummaryOptions
	// Records are the stat, overhead and tdb records in output order: for
	// each query in the run's order, each group's stat followed by its
	// overhead, then the query's tdb.
	Records []Record
	// Warnings are about the input as a whole (no end record, load records
	// without samples); the records carry their own.
	Warnings []string
}

// Stats returns the stat records in output order.
func (s *Summary) Stats() []*Stat { return recordsOf[*Stat](s.Records) }

// Overheads returns the overhead records in output order.
func (s *Summary) Overheads() []*Overhead { return recordsOf[*Overhead](s.Records) }

// TDBs returns the tdb records in output order.
func (s *Summary) TDBs() []*TDB { return recordsOf[*TDB](s.Records) }

func recordsOf[T Record](recs []Record) []T {
	var out []T
	for _, r := range recs {
		if t, ok := r.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

// Summarize computes the summary of recs, which must have a run record.
// The result depends only on recs and opt: the groups' order comes from the
// run record and each bootstrap's seed from GroupSeed.
func Summarize(recs *Records, opt SummaryOptions) (*Summary, error) {
	if err := opt.Check(); err != nil {
		return nil, err
	}
	if recs.Run == nil {
		return nil, errors.New("no run record")
	}
	sum := &Summary{Run: recs.Run, RunRaw: recs.RunRaw, Options: opt}
	if len(recs.Ends) == 0 {
		sum.Warnings = append(sum.Warnings, "no end record: the run was interrupted and its last level may be short")
	} else if recs.Ends[len(recs.Ends)-1].Interrupted {
		sum.Warnings = append(sum.Warnings, "the run was interrupted (end.interrupted is true)")
	}
	if len(recs.Samples) == 0 {
		sum.Warnings = append(sum.Warnings, "no sample records")
	}
	queries := map[string]Query{}
	for _, q := range recs.Run.Queries {
		queries[q.ID] = q
	}

	loads := map[loadKey]*loadTotal{}
	var loadOrder []loadKey
	for _, l := range recs.Loads {
		k := loadKey{l.Path, l.Query, l.Concurrency}
		t := loads[k]
		if t == nil {
			t = new(loadTotal)
			loads[k] = t
			loadOrder = append(loadOrder, k)
		}
		t.durationNS += l.DurationNS
		t.requests += l.Requests
		t.failed += l.Errors + l.Timeouts
	}

	ord := newGroupOrdering(recs.Run)
	groups := groupSamples(recs.Samples, ord)
	byKey := map[GroupKey]*sampleGroup{}
	for _, g := range groups {
		byKey[g.key] = g
	}
	// A load record goes with the warm group of its level, or the cold one
	// when the level has only cold samples.
	loadOf := func(k GroupKey) *loadTotal {
		lk := loadKey{k.Path, k.Query, k.Concurrency}
		l := loads[lk]
		if l == nil {
			return nil
		}
		if k.Phase != PhaseWarm {
			if _, warm := byKey[GroupKey{k.Path, k.Query, PhaseWarm, k.Concurrency}]; warm {
				return nil
			}
		}
		return l
	}

	// The bootstraps dominate the cost and each group's depends only on
	// its own samples and seed, so groups run in parallel and land in
	// fixed slots: the output does not depend on scheduling.
	statList := make([]*Stat, len(groups))
	parallelEach(len(groups), func(i int) {
		statList[i] = summarizeGroup(groups[i], queries[groups[i].key.Query], recs.Run.RunID, opt)
	})
	statOf := map[GroupKey]*Stat{}
	for i, g := range groups {
		st := statList[i]
		if l := loadOf(g.key); l != nil {
			l.used = true
			failed := l.failed
			st.LoadErrors = &failed
			if rps, ok := l.rps(); ok {
				st.ThroughputRPS = &rps
			} else {
				st.Warnings = append(st.Warnings, "load record has no duration: no throughput")
			}
		}
		statOf[g.key] = st
	}
	overheads := make([]*Overhead, len(groups))
	parallelEach(len(groups), func(i int) {
		overheads[i] = overheadOf(groups[i], byKey, statOf, opt)
	})
	for i, g := range groups {
		sum.Records = append(sum.Records, statOf[g.key])
		if ov := overheads[i]; ov != nil {
			sum.Records = append(sum.Records, ov)
		}
		if i == len(groups)-1 || groups[i+1].key.Query != g.key.Query {
			if td := tdbOf(g.key.Query, byKey, opt); td != nil {
				td.RunID = recs.Run.RunID
				sum.Records = append(sum.Records, td)
			}
		}
	}
	for _, k := range loadOrder {
		if !loads[k].used {
			sum.Warnings = append(sum.Warnings, fmt.Sprintf("load record for %s %s c=%d has no samples; its throughput is not reported", k.query, k.path, k.concurrency))
		}
	}
	return sum, nil
}

// summarizeGroup makes the stat record of g.
func summarizeGroup(g *sampleGroup, q Query, runID string, opt SummaryOptions) *Stat {
	seed := GroupSeed(opt.Seed, g.key)
	s := stats.Summarize(g.ok)
	st := &Stat{
		Header: Header{RunID: runID},
		Path:   g.key.Path, Query: g.key.Query, Weight: q.Weight, Size: q.Size,
		Phase: g.key.Phase, Concurrency: g.key.Concurrency,
		N: s.N, Timeouts: g.timeouts, Errors: g.errors,
		MinNS: roundNS(s.Min), P50NS: roundNS(s.P50), P95NS: roundNS(s.P95),
		P99NS: roundNS(s.P99), MaxNS: roundNS(s.Max), MeanNS: roundNS(s.Mean),
		CILevel: opt.CILevel, Resamples: opt.Resamples, Seed: seed,
	}
	if s.N == 0 {
		st.Warnings = append(st.Warnings, "no ok samples: every number is 0")
	} else {
		st.P50CINS = roundInterval(stats.BootstrapQuantileCI(g.ok, 0.5, opt.CILevel, opt.Resamples, seed))
		st.P95CINS = roundInterval(stats.BootstrapQuantileCI(g.ok, 0.95, opt.CILevel, opt.Resamples, seed))
		if s.N == 1 {
			st.Warnings = append(st.Warnings, "n=1: the intervals are a single point")
		}
		st.Warnings = append(st.Warnings, s.Warnings()...)
	}
	if g.timeouts+g.errors > 0 {
		st.Warnings = append(st.Warnings, fmt.Sprintf("not in the percentiles: %s, %s",
			countNoun(g.timeouts, "timeout"), countNoun(g.errors, "error")))
	}
	if g.hasSegs {
		st.SegmentsP50NS = &Segments{
			TParse: roundNS(stats.Median(g.segs[0])), TPool: roundNS(stats.Median(g.segs[1])),
			TTxn: roundNS(stats.Median(g.segs[2])), TDB: roundNS(stats.Median(g.segs[3])),
			TSerialize: roundNS(stats.Median(g.segs[4])),
		}
		if len(g.overlap) > 0 {
			o := roundNS(stats.Median(g.overlap))
			st.SerializeOverlapP50NS = &o
		}
		for j, name := range []string{"t_parse", "t_pool", "t_txn", "t_db", "t_serialize"} {
			if len(g.segs[j]) != s.N {
				st.Warnings = append(st.Warnings, fmt.Sprintf("%s is on %d of %d ok samples", name, len(g.segs[j]), s.N))
			}
		}
	}
	return st
}

// parallelEach calls f(0) .. f(n-1) on up to GOMAXPROCS goroutines and
// returns when all have returned.
func parallelEach(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
}

// countNoun is "1 timeout", "2 timeouts".
func countNoun(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// overheadOf makes the overhead record of g against native's group with
// the same query, phase and concurrency, or returns nil when there is none
// (g is native, native lacks the group, or either side has no ok sample).
func overheadOf(g *sampleGroup, byKey map[GroupKey]*sampleGroup, statOf map[GroupKey]*Stat, opt SummaryOptions) *Overhead {
	if g.key.Path == PathNative {
		return nil
	}
	nk := GroupKey{PathNative, g.key.Query, g.key.Phase, g.key.Concurrency}
	ng := byKey[nk]
	if ng == nil || len(ng.ok) == 0 || len(g.ok) == 0 {
		return nil
	}
	pst, nst := statOf[g.key], statOf[nk]
	ov := &Overhead{
		Header: Header{RunID: pst.RunID},
		Path:   g.key.Path, Query: g.key.Query, Phase: g.key.Phase, Concurrency: g.key.Concurrency,
		NativeP50NS: nst.P50NS, PathP50NS: pst.P50NS,
		DeltaP50NS:   pst.P50NS - nst.P50NS,
		DeltaP50CINS: roundInterval(stats.BootstrapQuantileDiffCI(ng.ok, g.ok, 0.5, opt.CILevel, opt.Resamples, pst.Seed)),
	}
	if native := stats.Median(ng.ok); native > 0 {
		ov.RelP50 = (stats.Median(g.ok) - native) / native
	}
	if pst.ThroughputRPS != nil && nst.ThroughputRPS != nil && *nst.ThroughputRPS > 0 {
		r := *pst.ThroughputRPS / *nst.ThroughputRPS
		ov.ThroughputRatio = &r
	}
	if len(g.own) > 0 {
		own := roundNS(stats.Median(g.own))
		ov.OwnP50NS = &own
		if nst.P50NS > 0 {
			r := float64(own) / float64(nst.P50NS)
			ov.OwnRelP50 = &r
		}
	}
	if rels := pairedRel(ng, g); len(rels) >= minPaired {
		med := stats.Median(rels)
		iv := stats.BootstrapQuantileCI(rels, 0.5, opt.CILevel, opt.Resamples, pst.Seed)
		ov.PairedN = len(rels)
		ov.PairedRelP50 = &med
		ov.PairedRelP50CI = &[2]float64{iv.Lo, iv.Hi}
	}
	return ov
}

// minPaired is the fewest common iterations a paired estimate is made from.
const minPaired = 5

// pairedRel returns (path - native) / native for every iteration both
// groups completed, in iteration order. perfrun runs the paths of one
// iteration back to back (alternating their order), so the machine's drift
// between iterations cancels in each ratio, which the two independent
// medians of rel_p50 cannot do.
func pairedRel(native, path *sampleGroup) []float64 {
	iters := make([]int, 0, len(path.byIter))
	for it := range path.byIter {
		if n, ok := native.byIter[it]; ok && n > 0 {
			iters = append(iters, it)
		}
	}
	slices.Sort(iters)
	rels := make([]float64, len(iters))
	for i, it := range iters {
		n := native.byIter[it]
		rels[i] = (path.byIter[it] - n) / n
	}
	return rels
}

// tdbOf makes the tdb record of query: native's warm concurrency-1 dur_ns
// median against the server path's warm concurrency-1 t_db_ns median, or
// returns nil when either is missing.
func tdbOf(query string, byKey map[GroupKey]*sampleGroup, opt SummaryOptions) *TDB {
	ng := byKey[GroupKey{PathNative, query, PhaseWarm, 1}]
	sg := byKey[GroupKey{PathServer, query, PhaseWarm, 1}]
	if ng == nil || sg == nil || len(ng.ok) == 0 || len(sg.tdb) == 0 {
		return nil
	}
	native := roundNS(stats.Median(ng.ok))
	server := roundNS(stats.Median(sg.tdb))
	diff := server - native
	if diff < 0 {
		diff = -diff
	}
	return &TDB{
		Query:       query,
		NativeP50NS: native, ServerTDBP50NS: server,
		ToleranceRel: opt.ToleranceRel, FloorNS: opt.FloorNS,
		TDBMatchesNative: float64(diff) <= opt.ToleranceRel*float64(native) || diff <= opt.FloorNS,
	}
}

// WriteJSON writes the run record as read, then the records, one per line.
func (s *Summary) WriteJSON(w io.Writer) error {
	jw := NewWriter(w, s.Run.RunID)
	var err error
	if len(s.RunRaw) > 0 {
		err = jw.WriteRaw(s.RunRaw)
	} else {
		err = jw.Write(s.Run)
	}
	if err != nil {
		return err
	}
	for _, r := range s.Records {
		if err := jw.Write(r); err != nil {
			return err
		}
	}
	return nil
}
