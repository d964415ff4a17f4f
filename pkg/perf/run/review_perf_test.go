// Pipeline behaviour checked by a review of 2026-12-05; where a test's
// comment names a fault, it is what the code did before the fix.

package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

// TestPerfReviewReadQueriesTrailingData: ReadQueries (queries.go:67-69)
// decodes only the first JSON value of a line with a json.Decoder and never
// checks that the rest of the line is empty, so a line holding two objects,
// or an object followed by garbage, is accepted and its tail silently
// dropped: the second query is never run. ReadQueries' doc says "one JSON
// object per line"; a malformed line must be an error naming file:line.
func TestPerfReviewReadQueriesTrailingData(t *testing.T) {
	for _, in := range []string{
		`{"id":"a","sql":"SELECT 1"} {"id":"b","sql":"SELECT 2"}`,
		`{"id":"a","sql":"SELECT 1"} garbage`,
	} {
		qs, err := ReadQueries(strings.NewReader(in+"\n"), "q.jsonl")
		if err == nil || !strings.Contains(err.Error(), "q.jsonl:1") {
			t.Errorf("%s: got %d queries, err %v; want an error naming q.jsonl:1", in, len(qs), err)
		}
	}
}

// TestPerfReviewOnlyDuplicateID: selectQueries (study.go:117-119) compares
// the number of kept queries with len(only), so "--only select1,select1"
// (a known id given twice) fails with "unknown query id", which is false.
// Expected: the query is run once (or, at least, the error does not claim
// a known id is unknown).
func TestPerfReviewOnlyDuplicateID(t *testing.T) {
	qs, err := selectQueries("", []string{"select1", "select1"})
	if err != nil {
		t.Fatalf("--only select1,select1: %v; want select1 selected once", err)
	}
	if len(qs) != 1 || qs[0].ID != "select1" {
		t.Errorf("--only select1,select1: %v", qs)
	}
}

// TestPerfReviewResumeEndCountsAllSamples: after --resume the end record's
// samples field (docs/formats.md: "`end` — last; ..., `samples` (count)")
// counts only the samples written by the resuming invocation
// (study.go:188, r.Samples()), not the samples the file holds, so the
// completed file's end record says 8 while it has 16 sample records.
func TestPerfReviewResumeEndCountsAllSamples(t *testing.T) {
	db := pgtest.Shared(t)
	dir := t.TempDir()
	qfile := filepath.Join(dir, "q.jsonl")
	if err := os.WriteFile(qfile, []byte(`{"id":"a","weight":"light","size":"1","sql":"SELECT 1"}`+"\n"+
		`{"id":"b","weight":"light","size":"1","sql":"SELECT 2"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "samples.jsonl")
	study := func(ctx context.Context, resume bool, progress *cancelOnWrite) error {
		s := Study{
			Config: Config{Settings: Settings{DatabaseURL: db.URL(), Timeout: 5 * time.Second, MaxRows: DefaultMaxRows, MaxBytes: DefaultMaxBytes},
				Paths: []string{"native", "server"}, Iterations: 3, Warmup: 1},
			QueryFile: qfile, Out: out, Resume: resume,
		}
		if progress != nil {
			s.Progress = *progress
		}
		_, err := s.Run(ctx, nil)
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := study(ctx, false, &cancelOnWrite{cancel}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("first run: %v, want ErrInterrupted", err)
	}
	if err := study(context.Background(), true, nil); err != nil {
		t.Fatalf("resume: %v", err)
	}
	recs := readRecords(t, out)
	if len(recs.Ends) != 1 {
		t.Fatalf("%d end records", len(recs.Ends))
	}
	if got, want := recs.Ends[0].Samples, int64(len(recs.Samples)); got != want {
		t.Errorf("end.samples = %d, but the file holds %d sample records", got, want)
	}
}
