// Review of perfrun (2026-12-05): each test asserts what docs/formats.md
// and perfrun's own comments promise, and fails on the code as found.

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/perf"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// rvArgs is a small, fast run on the native path against db.
func rvArgs(db *pgtest.Cluster, extra ...string) []string {
	return append([]string{"--database-url", db.URL(), "--paths", "native", "--concurrency=", "--warmup", "0", "-n", "1"}, extra...)
}

func rvQueryFile(t *testing.T, lines ...string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "q.jsonl")
	if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func rvRead(t *testing.T, b []byte) *perf.Records {
	t.Helper()
	recs, err := perf.ReadAll(bytes.NewReader(b), "out")
	if err != nil {
		t.Fatalf("perfrun's output is not readable: %v\n%s", err, b)
	}
	return recs
}

// cancelWriter cancels when what is written to it contains marker.
type cancelWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.marker) {
		w.cancel()
	}
	return len(p), nil
}

// TestPerfrunReviewNoSweepNoConnectionCheck: the sweep runs only on the point
// lookup (runner.go Sweep returns at once when the query set has no
// pk_lookup), yet Study.Run (study.go:150-154) asks the server for
// max(--concurrency)+2 free connections whenever --concurrency is set, so
// `perfrun --only select1` (or any --queries file without pk_lookup) fails
// with "the concurrency sweep needs N connections" for a sweep that will
// never run. Expected: the check is skipped (and the run succeeds).
func TestPerfrunReviewNoSweepNoConnectionCheck(t *testing.T) {
	db := pgtest.Shared(t)
	var out, errb bytes.Buffer
	args := []string{"--database-url", db.URL(), "--paths", "native", "--only", "select1",
		"--concurrency", "1,4,16,200", "--warmup", "0", "-n", "1"}
	code := run(context.Background(), args, &out, &errb)
	if code != exitOK {
		t.Fatalf("--only select1 (no pk_lookup, so no sweep): exit %d, stderr %q; want 0", code, errb.String())
	}
	if recs := rvRead(t, out.Bytes()); len(recs.Loads) != 0 {
		t.Errorf("%d load records, want none", len(recs.Loads))
	}
}

// TestPerfrunReviewRedactDatabaseURLEqualsForm: the run record's args are meant
// to hide the password of a database URL (provenance.go redact), but redact
// parses each whole argument as a connection string, so the common form
// `--database-url=postgres://user:PASSWORD@host/db` does not parse as one
// and the password is written in clear into samples.jsonl (and from there
// into summary.jsonl and perf.html, which get committed to
// benchmarks/results).
func TestPerfrunReviewRedactDatabaseURLEqualsForm(t *testing.T) {
	db := pgtest.Shared(t)
	// The cluster trusts local connections, so any password logs in.
	u := strings.Replace(db.URL(), "postgres://postgres@", "postgres://postgres:s3cr3tpw@", 1)
	for _, args := range [][]string{
		{"--database-url=" + u},
		{"--database-url", u}, // companion: the spaced form is redacted
	} {
		var out, errb bytes.Buffer
		args = append(args, "--paths", "native", "--only", "select1", "--concurrency=", "--warmup", "0", "-n", "1")
		if code := run(context.Background(), args, &out, &errb); code != exitOK {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		if strings.Contains(out.String(), "s3cr3tpw") {
			recs := rvRead(t, out.Bytes())
			t.Errorf("%s: the password is in the output: args %q", args[0], recs.Run.Args)
		}
	}
}

// TestPerfrunReviewInterruptInLastCallKeepsUnit: a unit interrupted by a
// signal is dropped ("whole units are kept"): latencyUnit checks ctx before
// each call, but not after the last one, so a SIGINT during the last timed
// call of a unit returns the unit with that cut-off call recorded as an
// `error` sample, and Latency flushes it. The file then holds a failure
// that never happened, and ReadResume counts the unit as whole, so
// --resume keeps it. Expected: the unit is not written (or, at least, no
// sample of the cut-off call).
func TestPerfrunReviewInterruptInLastCallKeepsUnit(t *testing.T) {
	db := pgtest.Shared(t)
	qf := rvQueryFile(t, `{"id":"sleepy","weight":"light","size":"1","sql":"SELECT pg_sleep(0.7)"}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel once the second call (the one timed call, after the cold
	// one) is running: a second transaction start seen on the backend.
	go func() {
		conn, err := pgx.Connect(context.Background(), db.URL())
		if err != nil {
			t.Error(err)
			cancel()
			return
		}
		defer conn.Close(context.Background())
		seen := map[time.Time]bool{}
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) && ctx.Err() == nil {
			var xs time.Time
			err := conn.QueryRow(context.Background(), `SELECT xact_start FROM pg_stat_activity
				WHERE query = 'SELECT pg_sleep(0.7)' AND state = 'active' AND pid <> pg_backend_pid()`).Scan(&xs)
			if err == nil {
				seen[xs] = true
				if len(seen) == 2 {
					time.Sleep(150 * time.Millisecond)
					cancel()
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	var out, errb bytes.Buffer
	code := run(ctx, rvArgs(db, "--queries", qf), &out, &errb)
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d (interrupted); stderr %q", code, exitInterrupted, errb.String())
	}
	recs := rvRead(t, out.Bytes())
	for _, s := range recs.Samples {
		if s.Status != perf.StatusOK {
			t.Errorf("kept a sample of the call the interruption cut off: %s %s %s iter %d status %s: %s",
				s.Path, s.Query, s.Phase, s.Iter, s.Status, s.Error)
		}
	}
	if len(recs.Samples) != 0 {
		t.Errorf("the interrupted unit was written (%d samples); whole units only", len(recs.Samples))
	}
}

// TestPerfrunReviewResumeOtherIterations: --resume continues a file under the
// file's run record (its run_id, its iterations decide which units are
// whole), but takes every other setting from the new command line without
// comparing (only --mcp-protocol is checked, study.go openOut). Resuming a
// `-n 3` run with `-n 2` appends units of 2 timed calls under a run record
// that says iterations 3, which docs/formats.md calls the provenance of
// everything after it; a second interruption and --resume then throws those
// units away as torn (ReadResume: warm < iterations). Expected: a resume
// whose settings differ from the run record is refused as a usage error
// (or the file stays consistent with its run record).
func TestPerfrunReviewResumeOtherIterations(t *testing.T) {
	db := pgtest.Shared(t)
	t.Setenv("PERFRUN_PROGRESS", "1")
	qf := rvQueryFile(t,
		`{"id":"a","weight":"light","size":"1","sql":"SELECT 1"}`,
		`{"id":"b","weight":"light","size":"1","sql":"SELECT 2"}`)
	outFile := filepath.Join(t.TempDir(), "samples.jsonl")
	base := []string{"--database-url", db.URL(), "--paths", "native", "--concurrency=", "--warmup", "0", "--queries", qf, "--out", outFile}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	cw := &cancelWriter{marker: "paths x", cancel: cancel}
	if code := run(ctx, append(base, "-n", "3"), &out, cw); code != exitInterrupted {
		t.Fatalf("first run: exit %d, want %d: %s", code, exitInterrupted, cw.buf.String())
	}
	var errb bytes.Buffer
	code := run(context.Background(), append(base, "-n", "2", "--resume"), &out, &errb)
	if code == exitUsage {
		return // refused: fine
	}
	b, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	recs := rvRead(t, b)
	warm := map[string]int{}
	for _, s := range recs.Samples {
		if s.Phase == perf.PhaseWarm {
			warm[s.Query]++
		}
	}
	for q, n := range warm {
		if n != recs.Run.Iterations {
			t.Errorf("--resume -n 2 of a -n 3 run (exit %d): query %s has %d timed samples, the run record says iterations %d",
				code, q, n, recs.Run.Iterations)
		}
	}
}

// TestPerfrunReviewFailedRunEndsClean: when a path fails part-way (here the
// database stops accepting the run's logins after the first query),
// Study.Run (study.go:176-180) still writes the `end` record with
// interrupted false and exits 1. docs/formats.md: a file without `end` was
// interrupted hard and --resume continues it; `interrupted` is true when
// stopped early. The file left behind instead claims a finished run, so
// perfstat summarizes it without its "interrupted" warning while every
// query after the failure is missing. Expected: a failed run does not
// write an `end` record saying it finished (no `end`, or interrupted
// true).
func TestPerfrunReviewFailedRunEndsClean(t *testing.T) {
	db := pgtest.Shared(t)
	admin, err := pgx.Connect(context.Background(), db.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	for _, q := range []string{`DROP ROLE IF EXISTS zz_perfrun`, `CREATE ROLE zz_perfrun LOGIN`} {
		if _, err := admin.Exec(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { admin.Exec(context.Background(), `ALTER ROLE zz_perfrun LOGIN`) })
	qf := rvQueryFile(t,
		`{"id":"a","weight":"light","size":"1","sql":"SELECT pg_sleep(0.3)"}`,
		`{"id":"b","weight":"light","size":"1","sql":"SELECT 2"}`)
	u := strings.Replace(db.URL(), "postgres://postgres@", "postgres://zz_perfrun@", 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			var n int
			if err := admin.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
				WHERE usename = 'zz_perfrun' AND query = 'SELECT pg_sleep(0.3)' AND state = 'active'`).Scan(&n); err == nil && n > 0 {
				admin.Exec(context.Background(), `ALTER ROLE zz_perfrun NOLOGIN`)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	var out, errb bytes.Buffer
	args := []string{"--database-url", u, "--paths", "native", "--concurrency=", "--warmup", "0", "-n", "2", "--queries", qf}
	code := run(context.Background(), args, &out, &errb)
	<-done
	if code != exitFailure {
		t.Fatalf("exit %d, want %d (query b could not connect); stderr %q", code, exitFailure, errb.String())
	}
	recs := rvRead(t, out.Bytes())
	for _, e := range recs.Ends {
		if !e.Interrupted {
			t.Errorf("run failed (%s) after %d samples, but its end record says interrupted false: the file looks finished",
				strings.TrimSpace(errb.String()), len(recs.Samples))
		}
	}
}

// TestPerfrunReviewDuplicatePath: `--paths native,native` is accepted (check
// only tests each name is known, study.go:72-76): the path runs twice per
// unit and the file holds two samples for every (path, query, phase,
// concurrency, client, iter), which docs/formats.md says identifies one
// call (`iter` is the 0-based index within it); perfstat then pairs and
// counts them as one path. Expected: a usage error naming the repeated
// path.
func TestPerfrunReviewDuplicatePath(t *testing.T) {
	db := pgtest.Shared(t)
	var out, errb bytes.Buffer
	args := []string{"--database-url", db.URL(), "--paths", "native,server,native", "--only", "select1",
		"--concurrency=", "--warmup", "0", "-n", "1"}
	code := run(context.Background(), args, &out, &errb)
	if code != exitUsage {
		type key struct {
			path, phase string
			iter        int
		}
		seen := map[key]int{}
		if code == exitOK {
			for _, s := range rvRead(t, out.Bytes()).Samples {
				seen[key{s.Path, s.Phase, s.Iter}]++
			}
		}
		t.Errorf("--paths native,server,native: exit %d, want %d (usage); samples per (path, phase, iter): %v", code, exitUsage, seen)
	}
}
