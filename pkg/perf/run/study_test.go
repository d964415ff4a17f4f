package run

import (
	"cmp"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
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

// TestMCPProtocol: the e2e paths' client speaks the protocol version asked
// for (the TypeScript SDK's newest by default), the run record says which,
// a resumed file keeps it, and an unknown version is a usage error.
func TestMCPProtocol(t *testing.T) {
	db := pgtest.Shared(t)
	dir := t.TempDir()
	qfile := filepath.Join(dir, "q.jsonl")
	if err := os.WriteFile(qfile, []byte(`{"id":"a","weight":"light","size":"1","sql":"SELECT 1"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	study := func(version, out string, resume bool) error {
		s := Study{
			Config: Config{Settings: Settings{DatabaseURL: db.URL(), Timeout: 5 * time.Second, MaxRows: DefaultMaxRows,
				MaxBytes: DefaultMaxBytes, MCPProtocol: version},
				Paths: []string{"e2e-inproc", "e2e-http"}, Iterations: 2, Warmup: 1},
			QueryFile: qfile, Out: out, Resume: resume,
		}
		_, err := s.Run(context.Background(), io.Discard)
		return err
	}
	for _, v := range []string{"", mcp.ProtocolVersion20260728} {
		out := filepath.Join(dir, "samples"+v+".jsonl")
		if err := study(v, out, false); err != nil {
			t.Fatalf("version %q: %v", v, err)
		}
		recs := readRecords(t, out)
		want := cmp.Or(v, DefaultMCPProtocol)
		if recs.Run.MCPProtocol != want {
			t.Errorf("version %q: run record says %q, want %q", v, recs.Run.MCPProtocol, want)
		}
		if len(recs.Samples) != 6 { // 2 paths x (1 cold + 2 warm)
			t.Errorf("version %q: %d samples, want 6", v, len(recs.Samples))
		}
		for _, s := range recs.Samples {
			if s.Status != perf.StatusOK {
				t.Errorf("version %q: %s %s", v, s.Path, s.Error)
			}
		}
		other := mcp.ProtocolVersion20250618
		var ue *UsageError
		if err := study(other, out, true); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--mcp-protocol "+want) {
			t.Errorf("resume of a %s file with %s: %v", want, other, err)
		}
	}
	var ue *UsageError
	if err := study("2024-01-01", filepath.Join(dir, "x.jsonl"), false); !errors.As(err, &ue) || !strings.Contains(err.Error(), `"2024-01-01"`) {
		t.Errorf("unknown version: %v", err)
	}
}
