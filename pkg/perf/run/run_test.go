package run

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/perf"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var testQueries = []Query{
	{"select1", "ultralight", "1", "SELECT 1"},
	{PointLookup, "ultralight", "1", "SELECT g FROM generate_series(1, 10) g WHERE g = 4"},
	{"rows_100", "light", "~100", "SELECT g, g::text AS s FROM generate_series(1, 100) g"},
	{"slow", "heavy", "1", "SELECT count(*) FROM generate_series(1, 200000000)"},
}

// TestRunAllPathsAndSweep runs a small set on every in-process path and a
// two-level sweep, and checks the records the runner wrote.
func TestRunAllPathsAndSweep(t *testing.T) {
	db := pgtest.Shared(t)
	var out, progress bytes.Buffer
	cfg := Config{
		Settings:   Settings{DatabaseURL: db.URL(), Timeout: 300 * time.Millisecond, MaxRows: DefaultMaxRows, MaxBytes: DefaultMaxBytes},
		Paths:      []string{"native", "server", "e2e-inproc", "e2e-http"},
		Queries:    testQueries,
		Iterations: 3, Warmup: 1,
		Concurrency: []int{1, 3}, SweepDuration: 200 * time.Millisecond, SweepWarmup: 50 * time.Millisecond,
		Progress: &progress,
	}
	r := NewRunner(cfg, &out, "test-run")
	ctx := context.Background()
	if err := r.Latency(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	// Every sweep level reports a median, the first (whose samples the
	// latency unit owns) too.
	sweepLines := 0
	for _, line := range strings.Split(progress.String(), "\n") {
		if !strings.HasPrefix(line, "perfrun: sweep ") {
			continue
		}
		sweepLines++
		if strings.Contains(line, "p50 0s,") {
			t.Errorf("progress line without a median: %q", line)
		}
	}
	if sweepLines != 4 { // 2 levels x native, server
		t.Errorf("%d sweep progress lines, want 4:\n%s", sweepLines, progress.String())
	}
	recs, err := perf.ReadAll(strings.NewReader(`{"type":"run","version":"1.0","run_id":"test-run","started_at":"2026-01-01T00:00:00Z","tool":{},"host":{},"postgres":{},"scale_factor":null,"iterations":3,"warmup":1,"timeout_ms":300,"concurrency":[1,3],"sweep_duration_ns":1,"paths":[],"queries":[],"args":[]}`+"\n"+out.String()), "out")
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ path, query, phase string }
	count := map[key]int{}
	for _, s := range recs.Samples {
		if s.Concurrency != 1 {
			continue
		}
		count[key{s.Path, s.Query, s.Phase}]++
		switch {
		case s.Query == "slow" && s.Status != perf.StatusTimeout:
			t.Errorf("%s slow: status %s (%s), want timeout", s.Path, s.Status, s.Error)
		case s.Query != "slow" && s.Status != perf.StatusOK:
			t.Errorf("%s %s: status %s: %s", s.Path, s.Query, s.Status, s.Error)
		case s.Query == "rows_100" && s.Rows != 100:
			t.Errorf("%s rows_100: %d rows", s.Path, s.Rows)
		case s.DurNS <= 0:
			t.Errorf("%s %s: dur %d", s.Path, s.Query, s.DurNS)
		}
		if (s.Path == "server") != (s.TDBNS != nil) {
			t.Errorf("%s %s: segments present %v", s.Path, s.Query, s.TDBNS != nil)
		}
		if s.Query == "slow" && s.DurNS > int64(5*time.Second) {
			t.Errorf("%s slow took %v with a 300ms timeout", s.Path, time.Duration(s.DurNS))
		}
	}
	for _, p := range cfg.Paths {
		for _, q := range testQueries {
			if count[key{p, q.ID, perf.PhaseCold}] != 1 || count[key{p, q.ID, perf.PhaseWarm}] != 3 {
				t.Errorf("%s %s: %d cold, %d warm samples", p, q.ID, count[key{p, q.ID, perf.PhaseCold}], count[key{p, q.ID, perf.PhaseWarm}])
			}
		}
	}
	// The paths of one iteration run back to back, in an order that
	// reverses every other iteration (perfstat pairs them by iteration).
	turns := map[string][][]string{} // query -> iteration -> paths in order
	for _, s := range recs.Samples {
		if s.Concurrency != 1 || s.Phase != perf.PhaseWarm {
			continue
		}
		it := turns[s.Query]
		for len(it) <= s.Iter {
			it = append(it, nil)
		}
		it[s.Iter] = append(it[s.Iter], s.Path)
		turns[s.Query] = it
	}
	reversed := slices.Clone(cfg.Paths)
	slices.Reverse(reversed)
	for q, its := range turns {
		for i, order := range its {
			want := cfg.Paths
			if i%2 == 1 {
				want = reversed
			}
			if !slices.Equal(order, want) {
				t.Errorf("%s iteration %d ran %v, want %v", q, i, order, want)
			}
		}
	}
	if len(recs.Loads) != 4 {
		t.Fatalf("%d load records, want 4 (2 paths x 2 levels)", len(recs.Loads))
	}
	sweep := 0
	next := map[[2]any]int{} // (path, client) -> the iter its next sample must have
	for _, s := range recs.Samples {
		if s.Concurrency == 3 {
			sweep++
			if s.Client < 0 || s.Client > 2 || s.Query != PointLookup {
				t.Errorf("sweep sample %+v", s)
			}
			k := [2]any{s.Path, s.Client}
			if s.Iter != next[k] {
				t.Errorf("sweep sample of %s client %d: iter %d, want %d", s.Path, s.Client, s.Iter, next[k])
			}
			next[k] = s.Iter + 1
		}
	}
	for _, l := range recs.Loads {
		// The level's time, summed over the paths' turns.
		if l.Requests == 0 || l.Errors != 0 || l.Conns != l.Concurrency || l.DurationNS != cfg.SweepDuration.Nanoseconds() {
			t.Errorf("load %+v", l)
		}
	}
	if sweep == 0 {
		t.Error("no samples from the 3-client level")
	}
}

func TestCheckConnections(t *testing.T) {
	db := pgtest.Shared(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := CheckConnections(ctx, conn, 5); err != nil {
		t.Errorf("5 connections: %v", err)
	}
	if err := CheckConnections(ctx, conn, 100000); err == nil || !strings.Contains(err.Error(), "max_connections") {
		t.Errorf("100000 connections: %v", err)
	}
}

func TestReadResumeKeepsWholeUnits(t *testing.T) {
	run := `{"type":"run","version":"1.0","run_id":"r1","started_at":"2026-01-01T00:00:00Z","tool":{},"host":{},"postgres":{},"scale_factor":null,"iterations":2,"warmup":0,"timeout_ms":1000,"concurrency":[],"sweep_duration_ns":0,"paths":["native"],"queries":[{"id":"a","weight":"light","size":"1","sql":"SELECT 1"}],"args":[]}`
	s := func(q, phase string, iter int) string {
		return `{"type":"sample","version":"1.0","run_id":"r1","path":"native","query":"` + q + `","phase":"` + phase + `","concurrency":1,"iter":` + string(rune('0'+iter)) + `,"client":0,"status":"ok","dur_ns":5,"rows":1,"result_bytes":1}`
	}
	text := strings.Join([]string{run, s("a", "cold", 0), s("a", "warm", 0), s("a", "warm", 1), s("b", "cold", 0), s("b", "warm", 0)}, "\n") + "\n" + `{"type":"sam`
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ReadResume(path)
	if err != nil {
		t.Fatal(err)
	}
	if res.Run.RunID != "r1" || !res.Done[Unit{Path: "native", Query: "a"}] || res.Done[Unit{Path: "native", Query: "b"}] {
		t.Errorf("done %v", res.Done)
	}
	if n := strings.Count(string(res.Kept), "\n"); n != 4 || strings.Contains(string(res.Kept), `"query":"b"`) {
		t.Errorf("kept %d lines:\n%s", n, res.Kept)
	}
}

func TestReadQueries(t *testing.T) {
	qs, err := ReadQueries(strings.NewReader("# set\n{\"id\":\"a\",\"weight\":\"light\",\"size\":\"1\",\"sql\":\"SELECT 1\"}\n\n"), "q.jsonl")
	if err != nil || len(qs) != 1 || qs[0].SQL != "SELECT 1" {
		t.Fatalf("%v %v", qs, err)
	}
	for in, want := range map[string]string{
		"{\"id\":\"a\",\"sql\":\"x\"}\n{\"id\":\"a\",\"sql\":\"y\"}": "q.jsonl:2: duplicate id",
		"{\"id\":\"a\"}":                         "q.jsonl:1: id and sql are required",
		"{\"id\":\"a\",\"sql\":\"x\",\"bad\":1}": "q.jsonl:1: json: unknown field",
		"":                                       "no queries",
	} {
		if _, err := ReadQueries(strings.NewReader(in), "q.jsonl"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	if len(DefaultQueries()) != 9 {
		t.Errorf("%d default queries", len(DefaultQueries()))
	}
}

// TestMinTime: with MinTime a cheap query gets more than Iterations warm
// samples per path, the same number on every path, and a query slower
// than MinTime gets exactly Iterations.
func TestMinTime(t *testing.T) {
	db := pgtest.Shared(t)
	var out bytes.Buffer
	cfg := Config{
		Settings: Settings{DatabaseURL: db.URL(), Timeout: 5 * time.Second, MaxRows: DefaultMaxRows, MaxBytes: DefaultMaxBytes},
		Paths:    []string{"native", "server"},
		Queries: []Query{{ID: "select1", Weight: "ultralight", Size: "1", SQL: "SELECT 1"},
			{ID: "sleepy", Weight: "heavy", Size: "1", SQL: "SELECT count(*) FROM generate_series(1, 1000000)"}},
		Iterations: 3, Warmup: 0, MinTime: 150 * time.Millisecond,
	}
	if err := NewRunner(cfg, &out, "min-time").Latency(context.Background()); err != nil {
		t.Fatal(err)
	}
	warm := map[string]int{}
	for line := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
		var s perf.Sample
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatal(err)
		}
		if s.Phase == perf.PhaseWarm {
			warm[s.Path+" "+s.Query]++
		}
	}
	if n := warm["native select1"]; n <= 3 || n != warm["server select1"] {
		t.Errorf("select1: %d native and %d server warm samples, want more than 3 and equal", n, warm["server select1"])
	}
	// 1,000,000 rows take well over 25 ms; three rounds of two paths take
	// more than 150 ms, so no iteration is added... unless the machine is
	// very fast: allow one extra round at most.
	if n := warm["native sleepy"]; n < 3 || n > 4 {
		t.Errorf("sleepy: %d warm samples, want 3 (4 on a very fast machine)", n)
	}
}
