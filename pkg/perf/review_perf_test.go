// Pipeline behaviour checked by a review of 2026-12-05; where a test's
// comment names a fault, it is what the code did before the fix.

package perf

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Review tests for pkg/perf (records, summary, html). Tests that fail
// document a bug; the others pin behaviour that was checked and is right.

const rvRun = `{"type":"run","version":"1.0","run_id":"R1","paths":["native","server"],"queries":[{"id":"q","weight":"light","size":"1","sql":"SELECT 1"}],"iterations":1}`

func rvSample(path string, dur int64, iter int) string {
	return fmt.Sprintf(`{"type":"sample","version":"1.0","run_id":"R1","path":%q,"query":"q","phase":"warm","concurrency":1,"iter":%d,"client":0,"status":"ok","dur_ns":%d}`, path, iter, dur)
}

func rvRead(t *testing.T, lines ...string) *Records {
	t.Helper()
	recs, err := ReadAll(strings.NewReader(strings.Join(lines, "\n")+"\n"), "s.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func rvSummarize(t *testing.T, recs *Records, seed uint64, resamples int) *Summary {
	t.Helper()
	s, err := Summarize(recs, SummaryOptions{Seed: seed, Resamples: resamples, CILevel: 0.95, ToleranceRel: 0.1, FloorNS: 50000})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rvStat(t *testing.T, s *Summary, path string) *Stat {
	t.Helper()
	for _, st := range s.Stats() {
		if st.Path == path {
			return st
		}
	}
	t.Fatalf("no stat for %s", path)
	return nil
}

// ---- failing: bugs ----

// TestPerfReviewSampleWithoutDurNS: a sample record without dur_ns is
// accepted and counted as an ok call of 0 ns (validate, records.go:328-343,
// checks path, query, phase, status, concurrency but not that dur_ns is
// present), so it silently drags min/p50 down. docs/formats.md: a `sample`
// is "one timed call" whose `dur_ns` is its wall time, and "a line that ...
// has a bad field is an error naming file:line". Expected: s.jsonl:2 error.
func TestPerfReviewSampleWithoutDurNS(t *testing.T) {
	line := `{"type":"sample","version":"1.0","run_id":"R1","path":"native","query":"q","phase":"warm","concurrency":1,"iter":0,"client":0,"status":"ok"}`
	recs, err := ReadAll(strings.NewReader(rvRun+"\n"+line+"\n"), "s.jsonl")
	if err == nil {
		t.Fatalf("sample without dur_ns accepted as dur_ns=%d; want an error naming s.jsonl:2", recs.Samples[0].DurNS)
	}
	if !strings.HasPrefix(err.Error(), "s.jsonl:2: ") || !strings.Contains(err.Error(), "dur_ns") {
		t.Errorf("error %q, want s.jsonl:2 and dur_ns named", err)
	}
}

// TestPerfReviewFieldNamesAreCaseSensitive: decode (records.go:503-521) uses
// encoding/json, which matches keys case-insensitively, so an unknown field
// "DUR_NS" overwrites dur_ns, and a record whose only type key is "TYPE"
// passes the "type missing" check. docs/formats.md: every record carries
// `type`; a reader "ignores fields it does not know". Expected: DUR_NS is
// ignored (dur_ns stays 5) and a record without a `type` key is refused.
func TestPerfReviewFieldNamesAreCaseSensitive(t *testing.T) {
	line := strings.Replace(rvSample("native", 5, 0), `"dur_ns":5`, `"dur_ns":5,"DUR_NS":9000000`, 1)
	recs, err := ReadAll(strings.NewReader(rvRun+"\n"+line+"\n"), "s.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if got := recs.Samples[0].DurNS; got != 5 {
		t.Errorf("dur_ns read as %d from a line with dur_ns 5 and an unknown field DUR_NS", got)
	}
	upper := strings.Replace(rvSample("native", 5, 0), `"type"`, `"TYPE"`, 1)
	if _, err := ReadAll(strings.NewReader(rvRun+"\n"+upper+"\n"), "s.jsonl"); err == nil {
		t.Error(`a record with "TYPE" but no "type" was accepted; want "type missing" at s.jsonl:2`)
	}
}

// TestPerfReviewBadTimeFieldNamed: jsonError (records.go:528-534) names the
// field only for *json.UnmarshalTypeError; a malformed `started_at` /
// `finished_at` yields `run: parsing time "yesterday" as ...` without the
// field's name, unlike every other bad field ("field dur_ns: ..."). The
// brief/docs: the error says file:line and what was wrong. Expected: the
// message names started_at.
func TestPerfReviewBadTimeFieldNamed(t *testing.T) {
	run := strings.Replace(rvRun, `"iterations":1`, `"iterations":1,"started_at":"yesterday"`, 1)
	_, err := ReadAll(strings.NewReader(run+"\n"), "s.jsonl")
	if err == nil || !strings.HasPrefix(err.Error(), "s.jsonl:1: ") {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(err.Error(), "started_at") {
		t.Errorf("error %q does not name the bad field started_at", err)
	}
}

// TestPerfReviewHugeDurationOverflows: roundNS (summary.go:215-220) converts
// with int64(math.Round(x)); float64(MaxInt64) is 2^63, which does not fit,
// so on amd64 a dur_ns the reader accepted (9223372036854775807) comes out
// as min/p50/max/mean = -9223372036854775808: negative, and max < min.
// Expected: numbers stay within [0, MaxInt64] (saturate) and min <= p50 <= max.
func TestPerfReviewHugeDurationOverflows(t *testing.T) {
	recs := rvRead(t, rvRun, rvSample("native", math.MaxInt64, 0), rvSample("native", math.MaxInt64, 1))
	st := rvStat(t, rvSummarize(t, recs, 1, 100), "native")
	for name, v := range map[string]int64{"min_ns": st.MinNS, "p50_ns": st.P50NS, "p95_ns": st.P95NS, "p99_ns": st.P99NS,
		"max_ns": st.MaxNS, "mean_ns": st.MeanNS, "p50_ci_ns[0]": st.P50CINS[0], "p50_ci_ns[1]": st.P50CINS[1]} {
		if v < 0 {
			t.Errorf("%s = %d for dur_ns %d", name, v, int64(math.MaxInt64))
		}
	}
	if !(st.MinNS <= st.P50NS && st.P50NS <= st.MaxNS) {
		t.Errorf("min %d, p50 %d, max %d not ordered", st.MinNS, st.P50NS, st.MaxNS)
	}
}

// TestPerfReviewHTMLUniqueIDs: htmlElementID (html.go:324-336) maps every
// character outside [A-Za-z0-9_-] to '-', so two distinct query ids such
// as "q.1" and "q-1" both get id="latency-q-1" (and their charts
// "latency-chart-q-1"): duplicate ids make the page invalid HTML and the
// in-page links ambiguous. Expected: every id attribute is unique.
func TestPerfReviewHTMLUniqueIDs(t *testing.T) {
	recs := &Records{
		Run: &Run{Header: Header{RunID: "r"}, Paths: []string{"native"}, Queries: []Query{{ID: "q.1"}, {ID: "q-1"}}},
		Stats: []Stat{
			{Path: "native", Query: "q.1", Phase: PhaseWarm, Concurrency: 1, N: 30, P50NS: 1000, P95NS: 2000, P99NS: 3000},
			{Path: "native", Query: "q-1", Phase: PhaseWarm, Concurrency: 1, N: 30, P50NS: 1000, P95NS: 2000, P99NS: 3000},
		},
	}
	var buf bytes.Buffer
	if err := RenderHTML(&buf, recs); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, id := range htmlIDs(buf.String()) {
		if seen[id] {
			t.Errorf("id %q appears more than once", id)
		}
		seen[id] = true
	}
}

// ---- passing: verified behaviour ----

// Percentiles are type 7 (docs/formats.md "percentiles by linear
// interpolation (type 7)"), the values numpy.percentile / Python's
// statistics.quantiles(method="inclusive") give.
func TestPerfReviewPercentilesType7(t *testing.T) {
	durs := []int64{700, 100, 1000, 300, 200, 900, 400, 600, 800, 500} // 100..1000, shuffled
	lines := []string{rvRun}
	for i, d := range durs {
		lines = append(lines, rvSample("native", d, i))
	}
	st := rvStat(t, rvSummarize(t, rvRead(t, lines...), 1, 200), "native")
	if st.N != 10 || st.MinNS != 100 || st.P50NS != 550 || st.P95NS != 955 || st.P99NS != 991 || st.MaxNS != 1000 || st.MeanNS != 550 {
		t.Errorf("got n %d min %d p50 %d p95 %d p99 %d max %d mean %d; want 10 100 550 955 991 1000 550",
			st.N, st.MinNS, st.P50NS, st.P95NS, st.P99NS, st.MaxNS, st.MeanNS)
	}
	if !slices.Contains(st.Warnings, "n=10 is too small for p95 (needs >= 20)") || !slices.Contains(st.Warnings, "n=10 is too small for p99 (needs >= 100)") {
		t.Errorf("warnings %q", st.Warnings)
	}
	// Even count: the mean of the two middle values.
	st = rvStat(t, rvSummarize(t, rvRead(t, rvRun, rvSample("native", 400, 0), rvSample("native", 100, 1), rvSample("native", 300, 2), rvSample("native", 200, 3)), 1, 200), "native")
	if st.P50NS != 250 {
		t.Errorf("median of 100..400 = %d, want 250", st.P50NS)
	}
}

func TestPerfReviewSingleSampleTiesAndEmptyGroup(t *testing.T) {
	st := rvStat(t, rvSummarize(t, rvRead(t, rvRun, rvSample("native", 777, 0)), 1, 500), "native")
	if st.N != 1 || st.MinNS != 777 || st.P50NS != 777 || st.P99NS != 777 || st.MaxNS != 777 || st.P50CINS != [2]int64{777, 777} || st.P95CINS != [2]int64{777, 777} {
		t.Errorf("single sample: %+v", *st)
	}
	lines := []string{rvRun}
	for i := range 40 {
		lines = append(lines, rvSample("native", 500, i))
	}
	st = rvStat(t, rvSummarize(t, rvRead(t, lines...), 1, 500), "native")
	if st.P50NS != 500 || st.P95NS != 500 || st.P50CINS != [2]int64{500, 500} {
		t.Errorf("ties: %+v", *st)
	}
	errLine := strings.Replace(rvSample("native", 5, 0), `"status":"ok"`, `"status":"error","error":"boom"`, 1)
	s := rvSummarize(t, rvRead(t, rvRun, errLine), 1, 500)
	st = rvStat(t, s, "native")
	if st.N != 0 || st.Errors != 1 || st.P50NS != 0 || len(st.Warnings) == 0 {
		t.Errorf("group with no ok sample: %+v", *st)
	}
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Errorf("WriteJSON of an empty group: %v", err)
	}
}

// Bootstrap intervals: reproducible, independent of the samples' order,
// contain the point estimate, shrink with n, and the seed matters.
func TestPerfReviewBootstrapProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	mk := func(n int) []string {
		var l []string
		for i := range n {
			l = append(l, rvSample("native", int64(100000+r.ExpFloat64()*20000), i), rvSample("server", int64(120000+r.ExpFloat64()*20000), i))
		}
		return l
	}
	body := mk(60)
	out := func(lines []string, seed uint64) string {
		var buf bytes.Buffer
		if err := rvSummarize(t, rvRead(t, append([]string{rvRun}, lines...)...), seed, 2000).WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	a, b := out(body, 3), out(body, 3)
	if a != b {
		t.Error("same input and seed, different output")
	}
	shuffled := slices.Clone(body)
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if c := out(shuffled, 3); c != a {
		t.Errorf("sample order changed the summary:\n%s\n%s", a, c)
	}
	if d := out(body, 4); d == a {
		t.Error("another seed gave the same intervals")
	}
	s := rvSummarize(t, rvRead(t, append([]string{rvRun}, body...)...), 3, 2000)
	for _, st := range s.Stats() {
		if !(st.P50CINS[0] <= st.P50NS && st.P50NS <= st.P50CINS[1] && st.P95CINS[0] <= st.P95NS && st.P95NS <= st.P95CINS[1]) {
			t.Errorf("%s: interval misses estimate: %+v", st.Path, *st)
		}
	}
	ov := s.Overheads()
	if len(ov) != 1 || !(ov[0].DeltaP50CINS[0] <= ov[0].DeltaP50NS && ov[0].DeltaP50NS <= ov[0].DeltaP50CINS[1]) || ov[0].PairedN != 60 {
		t.Errorf("overhead %+v", ov)
	}
	small := rvStat(t, rvSummarize(t, rvRead(t, append([]string{rvRun}, mk(20)...)...), 3, 2000), "native")
	big := rvStat(t, rvSummarize(t, rvRead(t, append([]string{rvRun}, mk(2000)...)...), 3, 2000), "native")
	if w1, w2 := small.P50CINS[1]-small.P50CINS[0], big.P50CINS[1]-big.P50CINS[0]; !(w2 < w1) {
		t.Errorf("p50 interval width %d at n=20, %d at n=2000; want it to shrink", w1, w2)
	}
}

// Input: CRLF line ends, a last line without newline, lines over 64 KiB.
func TestPerfReviewReaderLineEnds(t *testing.T) {
	big := strings.Replace(rvSample("native", 5, 1), `"status"`, `"pad":"`+strings.Repeat("x", 200<<10)+`","status"`, 1)
	in := rvRun + "\r\n" + rvSample("native", 7, 0) + "\r\n\r\n" + big + "\r\n" + rvSample("native", 9, 2)
	recs, err := ReadAll(strings.NewReader(in), "-")
	if err != nil || len(recs.Samples) != 3 || recs.Samples[2].DurNS != 9 {
		t.Fatalf("err %v", err)
	}
	_, err = ReadAll(strings.NewReader(rvRun+"\r\n\r\n"+"{bad\r\n"), "-")
	if err == nil || !strings.HasPrefix(err.Error(), "-:3: bad record: ") || strings.Contains(err.Error(), "\r") {
		t.Errorf("err %q", err)
	}
}
