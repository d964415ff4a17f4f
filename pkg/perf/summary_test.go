package perf

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpkit/qpkit/pkg/stats"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func readTestdata(t *testing.T, name string) *Records {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := ReadAll(f, name)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func summarizeTestdata(t *testing.T, opt SummaryOptions) *Summary {
	t.Helper()
	s, err := Summarize(readTestdata(t, "perfstat-samples.jsonl"), opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// golden compares got with testdata/name, rewriting it under -update and
// leaving a .got file on mismatch.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		os.WriteFile(path+".got", got, 0o644)
		t.Errorf("output differs from %s (see %s.got; go test -update rewrites it)", path, path)
	}
}

func TestSummarizeNumbers(t *testing.T) {
	s := summarizeTestdata(t, DefaultSummaryOptions())
	var order []string
	stat := map[GroupKey]*Stat{}
	for _, st := range s.Stats() {
		k := GroupKey{st.Path, st.Query, st.Phase, st.Concurrency}
		order = append(order, k.String())
		stat[k] = st
	}
	wantOrder := []string{
		"select1 native cold c=1", "select1 native warm c=1", "select1 native warm c=4",
		"select1 server cold c=1", "select1 server warm c=1", "select1 server warm c=4",
		"select1 e2e-http warm c=1",
		"q06 native warm c=1", "q06 server warm c=1", "q06 e2e-http warm c=1",
		"q01 native warm c=1", "q01 server warm c=1",
	}
	if strings.Join(order, "; ") != strings.Join(wantOrder, "; ") {
		t.Errorf("group order\n got %q\nwant %q", order, wantOrder)
	}

	nw := stat[GroupKey{"native", "select1", "warm", 1}]
	if nw.N != 5 || nw.Timeouts != 1 || nw.Errors != 1 || nw.MinNS != 100000 || nw.P50NS != 120000 ||
		nw.P95NS != 138000 || nw.P99NS != 139600 || nw.MaxNS != 140000 || nw.MeanNS != 120000 {
		t.Errorf("native warm select1: %+v", nw)
	}
	if nw.Weight != "ultralight" || nw.Size != "1" || nw.RunID != "20261129T235904Z-0badc0de" {
		t.Errorf("group labels: %+v", nw)
	}
	if !(nw.P50CINS[0] <= nw.P50NS && nw.P50NS <= nw.P50CINS[1]) || nw.P50CINS[0] < 100000 || nw.P50CINS[1] > 140000 {
		t.Errorf("p50 interval %v", nw.P50CINS)
	}
	if nw.CILevel != 0.95 || nw.Resamples != 10000 || nw.Seed != GroupSeed(1, GroupKey{"native", "select1", "warm", 1}) {
		t.Errorf("bootstrap settings %v %v %v", nw.CILevel, nw.Resamples, nw.Seed)
	}
	// The recorded seed reproduces the interval.
	iv := stats.BootstrapQuantileCI([]float64{140000, 100000, 130000, 110000, 120000}, 0.5, nw.CILevel, nw.Resamples, nw.Seed)
	if roundInterval(iv) != nw.P50CINS {
		t.Errorf("interval %v not reproduced from seed: %v", nw.P50CINS, iv)
	}
	wantWarn := []string{"n=5 is too small for p95 (needs >= 20)", "n=5 is too small for p99 (needs >= 100)", "not in the percentiles: 1 timeout, 1 error"}
	if strings.Join(nw.Warnings, "|") != strings.Join(wantWarn, "|") {
		t.Errorf("warnings %q", nw.Warnings)
	}
	if nw.SegmentsP50NS != nil || nw.ThroughputRPS != nil {
		t.Errorf("native has segments or throughput: %+v", nw)
	}

	sw := stat[GroupKey{"server", "select1", "warm", 1}]
	if sw.SegmentsP50NS == nil || *sw.SegmentsP50NS != (Segments{TParse: 1000, TPool: 2000, TTxn: 3000, TDB: 160000, TSerialize: 4000}) {
		t.Errorf("server segments %+v", sw.SegmentsP50NS)
	}

	n4 := stat[GroupKey{"native", "select1", "warm", 4}]
	if n4.N != 12 || n4.ThroughputRPS == nil || *n4.ThroughputRPS != 4000 || n4.LoadErrors == nil || *n4.LoadErrors != 3 {
		t.Errorf("native sweep %+v", n4)
	}
	if s4 := stat[GroupKey{"server", "select1", "warm", 4}]; s4.ThroughputRPS == nil || *s4.ThroughputRPS != 3000 {
		t.Errorf("server sweep %+v", s4)
	}

	empty := stat[GroupKey{"e2e-http", "q06", "warm", 1}]
	if empty.N != 0 || empty.Timeouts != 1 || empty.P50NS != 0 || len(empty.Warnings) == 0 || empty.Warnings[0] != "no ok samples: every number is 0" {
		t.Errorf("timeouts-only group %+v", empty)
	}
	cold := stat[GroupKey{"native", "select1", "cold", 1}]
	if cold.N != 1 || cold.P50CINS != [2]int64{500000, 500000} || cold.Warnings[0] != "n=1: the intervals are a single point" {
		t.Errorf("single-sample group %+v", cold)
	}
	if len(s.Warnings) != 0 {
		t.Errorf("input warnings %q", s.Warnings)
	}
}

func TestSummarizeOverhead(t *testing.T) {
	s := summarizeTestdata(t, DefaultSummaryOptions())
	ov := map[GroupKey]*Overhead{}
	for _, o := range s.Overheads() {
		ov[GroupKey{o.Path, o.Query, o.Phase, o.Concurrency}] = o
	}
	// server, e2e-http on select1 warm c=1, server cold, server warm c=4,
	// server q06, server q01; not e2e-http q06 (no ok samples).
	if len(ov) != 6 {
		t.Errorf("%d overhead records: %v", len(ov), ov)
	}
	o := ov[GroupKey{"server", "select1", "warm", 1}]
	if o == nil || o.NativeP50NS != 120000 || o.PathP50NS != 320000 || o.DeltaP50NS != 200000 ||
		math.Abs(o.RelP50-200000.0/120000) > 1e-12 || o.ThroughputRatio != nil {
		t.Fatalf("server overhead %+v", o)
	}
	// Every server sample is slower than every native one: the interval is
	// positive and holds the point estimate.
	if !(o.DeltaP50CINS[0] > 0 && o.DeltaP50CINS[0] <= o.DeltaP50NS && o.DeltaP50NS <= o.DeltaP50CINS[1]) {
		t.Errorf("delta interval %v", o.DeltaP50CINS)
	}
	if e := ov[GroupKey{"e2e-http", "select1", "warm", 1}]; e == nil || e.DeltaP50NS != 150000 || e.RelP50 != 1.25 {
		t.Errorf("e2e-http overhead %+v", e)
	}
	if c := ov[GroupKey{"server", "select1", "cold", 1}]; c == nil || c.DeltaP50NS != 400000 || c.DeltaP50CINS != [2]int64{400000, 400000} {
		t.Errorf("cold overhead %+v", c)
	}
	if w4 := ov[GroupKey{"server", "select1", "warm", 4}]; w4 == nil || w4.ThroughputRatio == nil || *w4.ThroughputRatio != 0.75 {
		t.Errorf("sweep overhead %+v", w4)
	}
}

func TestSummarizeTDB(t *testing.T) {
	verdicts := func(opt SummaryOptions) map[string]*TDB {
		m := map[string]*TDB{}
		for _, td := range summarizeTestdata(t, opt).TDBs() {
			m[td.Query] = td
		}
		return m
	}
	got := verdicts(DefaultSummaryOptions())
	for _, c := range []struct {
		query          string
		native, server int64
		match          bool
	}{
		{"select1", 120000, 160000, true}, // 40µs apart: only the 50µs floor passes it
		{"q06", 1000000, 1300000, false},  // 300µs apart: beyond 10% and the floor
		{"q01", 2000000, 2100000, true},   // 100µs apart: within 10%
	} {
		td := got[c.query]
		if td == nil || td.NativeP50NS != c.native || td.ServerTDBP50NS != c.server || td.TDBMatchesNative != c.match ||
			td.ToleranceRel != 0.10 || td.FloorNS != 50000 || td.RunID == "" {
			t.Errorf("%s: %+v, want native %d server %d match %v", c.query, td, c.native, c.server, c.match)
		}
	}
	opt := DefaultSummaryOptions()
	opt.FloorNS = 0
	if got := verdicts(opt); got["select1"].TDBMatchesNative || !got["q01"].TDBMatchesNative {
		t.Errorf("floor 0: select1 %+v q01 %+v", got["select1"], got["q01"])
	}
	opt.ToleranceRel = 0.01
	if got := verdicts(opt); got["q01"].TDBMatchesNative {
		t.Errorf("tolerance 1%%: q01 %+v", got["q01"])
	}
}

func TestSummarizeDeterministic(t *testing.T) {
	write := func(opt SummaryOptions) []byte {
		var b bytes.Buffer
		if err := summarizeTestdata(t, opt).WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	opt := DefaultSummaryOptions()
	opt.Resamples = 2000
	a, b := write(opt), write(opt)
	if !bytes.Equal(a, b) {
		t.Fatal("two runs with the same seed differ")
	}
	// Shuffled input gives the same output: order comes from the run record.
	recs := readTestdata(t, "perfstat-samples.jsonl")
	for i, j := 0, len(recs.Samples)-1; i < j; i, j = i+1, j-1 {
		recs.Samples[i], recs.Samples[j] = recs.Samples[j], recs.Samples[i]
	}
	s, err := Summarize(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	var rev bytes.Buffer
	if err := s.WriteJSON(&rev); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, rev.Bytes()) {
		t.Error("reversed samples give a different summary")
	}
	opt.Seed = 2
	if c := write(opt); bytes.Equal(a, c) {
		t.Error("seed 2 gives the same output as seed 1")
	}
	// The run record is copied unchanged, unknown fields included.
	first, _, _ := bytes.Cut(a, []byte("\n"))
	if !bytes.Contains(first, []byte(`"extra_future_field":{"kept":true}`)) {
		t.Errorf("run record not copied: %s", first)
	}
	// And the output reads back.
	back, err := ReadAll(bytes.NewReader(a), "summary")
	if err != nil {
		t.Fatal(err)
	}
	if back.Run == nil || len(back.Stats) != 12 || len(back.Overheads) != 6 || len(back.TDBs) != 3 {
		t.Errorf("read back %d stats %d overheads %d tdbs", len(back.Stats), len(back.Overheads), len(back.TDBs))
	}
}

func TestSummarizeSeedChangesIntervals(t *testing.T) {
	opt := DefaultSummaryOptions()
	opt.Resamples = 500
	a := summarizeTestdata(t, opt).Stats()
	opt.Seed = 99
	b := summarizeTestdata(t, opt).Stats()
	changed := false
	for i := range a {
		if a[i].P50NS != b[i].P50NS {
			t.Errorf("%s: p50 depends on the seed", a[i].Query)
		}
		if a[i].P50CINS != b[i].P50CINS || a[i].P95CINS != b[i].P95CINS {
			changed = true
		}
		if a[i].Seed == b[i].Seed {
			t.Errorf("%s %s: same group seed for base seeds 1 and 99", a[i].Query, a[i].Path)
		}
	}
	if !changed {
		t.Error("no interval changed with the seed")
	}
	// Groups get distinct seeds.
	seen := map[uint64]bool{}
	for _, st := range a {
		if seen[st.Seed] {
			t.Errorf("seed %d repeated", st.Seed)
		}
		seen[st.Seed] = true
	}
}

func TestSummarizeWarningsAndErrors(t *testing.T) {
	recs := readTestdata(t, "perfstat-samples.jsonl")
	recs.Ends = nil
	recs.Loads = append(recs.Loads, Load{Path: "native", Query: "q06", Concurrency: 16, DurationNS: 1e9, Requests: 1})
	s, err := Summarize(recs, DefaultSummaryOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := "no end record: the run was interrupted and its last level may be short|" +
		"load record for q06 native c=16 has no samples; its throughput is not reported"
	if strings.Join(s.Warnings, "|") != want {
		t.Errorf("warnings %q", s.Warnings)
	}
	if _, err := Summarize(&Records{}, DefaultSummaryOptions()); err == nil {
		t.Error("no run record: no error")
	}
	for _, opt := range []SummaryOptions{
		{Resamples: 0, CILevel: 0.95},
		{Resamples: 10, CILevel: 1},
		{Resamples: 10, CILevel: 0.95, ToleranceRel: -1},
		{Resamples: 10, CILevel: 0.95, ToleranceRel: math.NaN()},
		{Resamples: 10, CILevel: 0.95, FloorNS: -1},
	} {
		if _, err := Summarize(recs, opt); err == nil {
			t.Errorf("%+v accepted", opt)
		}
	}
}

func TestSummaryText(t *testing.T) {
	opt := DefaultSummaryOptions()
	opt.Resamples = 1000
	var b bytes.Buffer
	if err := summarizeTestdata(t, opt).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "perfstat-samples.txt", b.Bytes())
}

func TestTextNanos(t *testing.T) {
	for ns, want := range map[int64]string{
		0: "0ns", 999: "999ns", 1000: "1.00µs", 12345: "12.3µs", 999499: "999µs", 999500: "1.00ms",
		1234567: "1.23ms", 120000000: "120ms", 4560000000: "4.56s", 1234000000000: "1234s", -50000: "-50.0µs",
	} {
		if got := textNanos(ns); got != want {
			t.Errorf("textNanos(%d) = %q, want %q", ns, got, want)
		}
	}
}

// TestSummarizeSerializeOverlap: the median of t_serialize_overlap_ns is
// on the server's stat when its samples carry it, and absent otherwise.
func TestSummarizeSerializeOverlap(t *testing.T) {
	recs := readTestdata(t, "perfstat-samples.jsonl")
	var n int
	for i := range recs.Samples {
		s := &recs.Samples[i]
		if s.Path == PathServer && s.Query == "q01" && s.Phase == PhaseWarm {
			v := int64(1000 * (n + 1)) // 1, 2, 3, ... µs
			s.TSerializeOverlapNS = &v
			n++
		}
	}
	if n < 3 {
		t.Fatalf("testdata has %d warm server q01 samples", n)
	}
	sum, err := Summarize(recs, DefaultSummaryOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := int64(1000 * (n + 1) / 2)
	if n%2 == 0 {
		want = int64(1000*(n/2) + 500)
	}
	found := false
	for _, st := range sum.Stats() {
		switch {
		case st.Path == PathServer && st.Query == "q01" && st.Phase == PhaseWarm && st.Concurrency == 1:
			found = true
			if st.SerializeOverlapP50NS == nil || *st.SerializeOverlapP50NS != want {
				t.Errorf("q01 server overlap p50 %v, want %d", st.SerializeOverlapP50NS, want)
			}
		case st.SerializeOverlapP50NS != nil:
			t.Errorf("%s %s %s: overlap %d on samples without it", st.Path, st.Query, st.Phase, *st.SerializeOverlapP50NS)
		}
	}
	if !found {
		t.Fatal("no warm server q01 stat")
	}
}

func TestSummarizePaired(t *testing.T) {
	recs := readTestdata(t, "perfstat-samples.jsonl")
	tmpl := recs.Samples[0]
	tmpl.TParseNS, tmpl.TPoolNS, tmpl.TTxnNS, tmpl.TDBNS, tmpl.TSerializeNS, tmpl.TSerializeOverlapNS = nil, nil, nil, nil, nil, nil
	var samples []Sample
	add := func(path, query string, conc, iter int, dur float64) {
		s := tmpl
		s.Path, s.Query, s.Phase, s.Concurrency, s.Iter, s.Client = path, query, PhaseWarm, conc, iter, 0
		s.Status, s.DurNS = StatusOK, int64(math.Round(dur))
		samples = append(samples, s)
	}
	// The machine's speed drifts by up to 2x between iterations; in each
	// iteration the server is 0.4% slower than native. Native misses
	// iteration 39, and the server's samples come in reverse order, so
	// pairing must go by iteration, not by position.
	base := func(i int) float64 { return 1e6 * (1 + float64((i*7)%10)/10) }
	for i := 0; i < 39; i++ {
		add(PathNative, "qp", 1, i, base(i))
	}
	for i := 39; i >= 0; i-- {
		add(PathServer, "qp", 1, i, base(i)*1.004)
	}
	for i := 0; i < 4; i++ { // too few to pair
		add(PathNative, "few", 1, i, base(i))
		add(PathServer, "few", 1, i, base(i)*1.004)
	}
	for i := 0; i < 20; i++ { // a sweep level: never paired
		add(PathNative, "qp", 4, i, base(i))
		add(PathServer, "qp", 4, i, base(i)*1.004)
	}
	recs.Samples = samples
	recs.Loads = nil
	sum, err := Summarize(recs, DefaultSummaryOptions())
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, ov := range sum.Overheads() {
		switch {
		case ov.Query == "qp" && ov.Concurrency == 1:
			seen++
			if ov.PairedRelP50 == nil || ov.PairedN != 39 {
				t.Fatalf("qp paired: n %d, rel %v; want 39 pairs", ov.PairedN, ov.PairedRelP50)
			}
			if math.Abs(*ov.PairedRelP50-0.004) > 1e-6 {
				t.Errorf("paired rel p50 %v, want 0.004", *ov.PairedRelP50)
			}
			if ci := *ov.PairedRelP50CI; ci[0] > 0.004+1e-6 || ci[1] < 0.004-1e-6 || ci[1]-ci[0] > 1e-4 {
				t.Errorf("paired interval %v, want a narrow one around 0.004", ci)
			}
		case ov.PairedRelP50 != nil || ov.PairedN != 0 || ov.PairedRelP50CI != nil:
			t.Errorf("%s conc %d: paired estimate %v from too few or concurrent samples", ov.Query, ov.Concurrency, *ov.PairedRelP50)
		}
	}
	if seen != 1 {
		t.Fatalf("found %d qp overhead records at concurrency 1", seen)
	}
	var b strings.Builder
	if err := sum.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "paired +0.40% [") || !strings.Contains(b.String(), "n=39") {
		t.Errorf("text lacks the paired estimate:\n%s", b.String())
	}
}
