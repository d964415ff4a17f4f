// Review of 7294a03 (perfrun --resume refusing other settings; redact).

package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qpkit/qpkit/pkg/perf"
)

// rvResumeFile writes a samples file holding only run, as a run
// interrupted before its first unit leaves it, and returns its path.
func rvResumeFile(t *testing.T, run *perf.Run) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "samples.jsonl")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run.RunID = "zz-run"
	if err := perf.NewWriter(f, "").Write(run); err != nil {
		t.Fatal(err)
	}
	return out
}

func rvQueryFile(t *testing.T, sql string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "q.jsonl")
	if err := os.WriteFile(f, []byte(`{"id":"a","weight":"light","size":"1","sql":"`+sql+`"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// rvStudy is `perfrun --queries FILE --paths native -n 1 --warmup 0
// --resume --out out` with the other flags at their defaults
// (--concurrency 1,4,16,64, --sweep-duration 4s, --timeout 60s).
func rvStudy(qfile, out string) *Study {
	return &Study{
		Config: Config{Settings: Settings{DatabaseURL: "postgres://127.0.0.1:1/x", Timeout: 60 * time.Second,
			MaxRows: DefaultMaxRows, MaxBytes: DefaultMaxBytes},
			Paths: []string{"native"}, Iterations: 1, Warmup: 0,
			Concurrency: []int{1, 4, 16, 64}, SweepDuration: 4 * time.Second},
		QueryFile: qfile, Out: out, Resume: true,
	}
}

// A file written by perfrun before 7294a03 with a query set without
// pk_lookup (--queries FILE, or --only) records the --concurrency it was
// given (check cleared it only without native/server), although no sweep
// ran. check now clears Concurrency whenever pk_lookup is missing, and
// differs compares that nil with the recorded levels, so --resume refuses
// ("was measured with --concurrency [1 4 16 64]; resume it with the same
// settings"), and no command line can satisfy it: the same --concurrency
// is cleared again. The interrupted file cannot be resumed at all.
func TestDiffReviewResumeOlderFileWithUnusedConcurrency(t *testing.T) {
	qfile := rvQueryFile(t, "SELECT 1")
	out := rvResumeFile(t, &perf.Run{Iterations: 1, Warmup: 0, TimeoutMS: 60000, Concurrency: []int{1, 4, 16, 64},
		SweepDurationNS: (4 * time.Second).Nanoseconds(), Paths: []string{"native"},
		Queries: []perf.Query{{ID: "a", Weight: "light", Size: "1", SQL: "SELECT 1"}}})
	s := rvStudy(qfile, out)
	if err := s.check(); err != nil {
		t.Fatal(err)
	}
	f, _, _, _, err := s.openOut()
	if err != nil {
		t.Errorf("resuming, with the very same command line, a file an older perfrun wrote for a query set without pk_lookup (no sweep ran): %v", err)
		return
	}
	f.Close()
}

// docs/formats.md: "--resume refuses settings other than the run record's
// (iterations, warmup, min time, timeout, paths, queries, ...): the record
// is the provenance of every sample after it". differs compares only the
// queries' ids: a --queries file whose query "a" was edited (other SQL)
// resumes, and the samples measured with the new SQL are filed under a
// run record that names the old SQL.
func TestDiffReviewResumeRefusesEditedQuery(t *testing.T) {
	out := rvResumeFile(t, &perf.Run{Iterations: 1, Warmup: 0, TimeoutMS: 60000,
		SweepDurationNS: (4 * time.Second).Nanoseconds(), Paths: []string{"native"},
		Queries: []perf.Query{{ID: "a", Weight: "light", Size: "1", SQL: "SELECT 1"}}})
	s := rvStudy(rvQueryFile(t, "SELECT pg_sleep(1)"), out)
	if err := s.check(); err != nil {
		t.Fatal(err)
	}
	f, _, _, _, err := s.openOut()
	if err == nil {
		f.Close()
		t.Errorf("--resume accepted a query file whose query a is now %q where the run record says %q", "SELECT pg_sleep(1)", "SELECT 1")
	}
}

// redact (provenance.go) looks for the parsed password in the argument
// as it is written, so a password that a URL must percent-encode (any
// with @, :, /, %, #, ...) is never found and goes into the run record in
// the clear, in the --flag=URL form added today as in the bare one.
func TestDiffReviewRedactPercentEncodedPassword(t *testing.T) {
	for _, arg := range []string{"--database-url=postgres://bob:p%40ss%2Fw0rd@db.example/tpch", "postgres://bob:p%40ss%2Fw0rd@db.example/tpch"} {
		got := strings.Join(redact([]string{arg}), " ")
		if strings.Contains(got, "p%40ss%2Fw0rd") || strings.Contains(got, "p@ss/w0rd") {
			t.Errorf("redact(%q) = %q: the password is in the run record", arg, got)
		}
	}
}
