package run

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/qpkit/qpkit/pkg/perf"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// cancelOnWrite cancels a context at its first write: the runner's
// progress line after its first unit.
type cancelOnWrite struct{ cancel context.CancelFunc }

func (c cancelOnWrite) Write(p []byte) (int, error) { c.cancel(); return len(p), nil }

// TestInterruptAndResume stops a run after its first query, as Ctrl-C
// does, then resumes it: the file ends with every unit exactly once under
// the first run's id.
func TestInterruptAndResume(t *testing.T) {
	db := pgtest.Shared(t)
	dir := t.TempDir()
	qfile := filepath.Join(dir, "q.jsonl")
	if err := os.WriteFile(qfile, []byte(`{"id":"a","weight":"light","size":"1","sql":"SELECT 1"}`+"\n"+
		`{"id":"b","weight":"light","size":"~100","sql":"SELECT g FROM generate_series(1, 100) g"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "samples.jsonl")
	study := func(ctx context.Context, resume bool, progress io.Writer) (int64, error) {
		s := Study{
			Config: Config{Settings: Settings{DatabaseURL: db.URL(), Timeout: 5 * time.Second, MaxRows: DefaultMaxRows, MaxBytes: DefaultMaxBytes},
				Paths: []string{"native", "server"}, Iterations: 3, Warmup: 1, Progress: progress},
			QueryFile: qfile, Out: out, Resume: resume,
		}
		return s.Run(ctx, io.Discard)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n, err := study(ctx, false, cancelOnWrite{cancel})
	// A unit is one query on all paths, taking turns: 2 x (1 cold + 3 warm).
	if !errors.Is(err, ErrInterrupted) || n != 8 {
		t.Fatalf("interrupted run: %d samples, %v; want 8 and ErrInterrupted", n, err)
	}
	first := readRecords(t, out)
	if len(first.Ends) != 1 || !first.Ends[0].Interrupted {
		t.Fatalf("end records %+v", first.Ends)
	}
	if n, err := study(context.Background(), true, nil); err != nil || n != 8 {
		t.Fatalf("resumed run: %d samples, %v; want the 8 of the query left", n, err)
	}
	recs := readRecords(t, out)
	if recs.Run.RunID != first.Run.RunID {
		t.Errorf("run id %s after resume, was %s", recs.Run.RunID, first.Run.RunID)
	}
	count := map[[2]string]int{}
	for _, s := range recs.Samples {
		count[[2]string{s.Path, s.Query}]++
	}
	for _, p := range []string{"native", "server"} {
		for _, q := range []string{"a", "b"} {
			if count[[2]string{p, q}] != 4 {
				t.Errorf("%s %s: %d samples, want 4 (1 cold + 3 warm)", p, q, count[[2]string{p, q}])
			}
		}
	}
	if len(recs.Ends) != 1 || recs.Ends[0].Interrupted {
		t.Errorf("end records after resume %+v", recs.Ends)
	}
}

func readRecords(t *testing.T, path string) *perf.Records {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := perf.ReadAll(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
