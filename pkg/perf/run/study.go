// A whole perfrun invocation: check the settings, open the output, write
// the run record, run every unit, end with the end record.

package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/qpkit/qpkit/pkg/perf"
)

// Study is one run as the command line asks for it.
type Study struct {
	Config
	QueryFile string   // a query-set file; "" for DefaultQueries
	Only      []string // query ids to keep; empty keeps all
	Out       string   // the samples file; "" writes to the study's writer
	Resume    bool     // continue the interrupted Out
	Args      []string // the command line, for the run record
}

// UsageError is a problem with the settings or the input files, found
// before anything is measured.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// ErrInterrupted reports a run stopped by its context; whole units are
// kept in the output.
var ErrInterrupted = errors.New("interrupted")

// check validates the settings and resolves the query set and the mcpg
// binary.
func (s *Study) check() error {
	switch {
	case s.Iterations < 1 || s.Warmup < 0:
		return usagef("--iterations must be at least 1 and --warmup at least 0")
	case s.MinTime < 0:
		return usagef("--min-time must not be negative")
	case s.Timeout < time.Millisecond:
		return usagef("--timeout must be at least 1ms")
	case s.SweepDuration < 100*time.Millisecond && len(s.Concurrency) > 0:
		return usagef("--sweep-duration must be at least 100ms")
	case s.Resume && s.Out == "":
		return usagef("--resume needs --out FILE")
	case !mcp.IsValidProtocolVersion(s.mcpProtocol()):
		return usagef("--mcp-protocol %q is not an MCP protocol version mcp-go knows (%s)",
			s.MCPProtocol, strings.Join(mcp.ValidProtocolVersions, ", "))
	}
	for _, n := range s.Concurrency {
		if n < 1 || n > 10000 {
			return usagef("--concurrency %d is out of range 1..10000", n)
		}
	}
	for i, n := range s.Concurrency {
		if slices.Contains(s.Concurrency[:i], n) {
			return usagef("--concurrency: %d is given twice", n)
		}
	}
	for i, p := range s.Paths {
		if !slices.Contains(PathNames, p) {
			return usagef("--paths: unknown path %q (known: %s)", p, strings.Join(PathNames, ", "))
		}
		if slices.Contains(s.Paths[:i], p) {
			// Two samples per call would share one (path, query, phase, iter).
			return usagef("--paths: %q is given twice", p)
		}
	}
	var err error
	if s.Queries, err = selectQueries(s.QueryFile, s.Only); err != nil {
		return &UsageError{err}
	}
	if !slices.Contains(s.Paths, "native") && !slices.Contains(s.Paths, "server") ||
		!slices.ContainsFunc(s.Queries, func(q Query) bool { return q.ID == PointLookup }) {
		s.Concurrency = nil // the sweep runs pk_lookup on those two paths only
	}
	if s.MCPG == "" && slices.Contains(s.Paths, "e2e-stdio") {
		if s.MCPG = findMCPG(); s.MCPG == "" {
			return usagef("e2e-stdio needs the mcpg binary: pass --mcpg PATH or drop the path with --paths")
		}
	}
	return nil
}

// selectQueries reads the query set (the built-in one without a file) and
// keeps the ids in only, if any.
func selectQueries(file string, only []string) ([]Query, error) {
	queries := DefaultQueries()
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if queries, err = ReadQueries(f, file); err != nil {
			return nil, err
		}
	}
	if len(only) == 0 {
		return queries, nil
	}
	var kept []Query
	for _, q := range queries {
		if slices.Contains(only, q.ID) {
			kept = append(kept, q)
		}
	}
	for _, id := range only {
		if !slices.ContainsFunc(kept, func(q Query) bool { return q.ID == id }) {
			return nil, fmt.Errorf("--only %s: unknown query id %q", strings.Join(only, ","), id)
		}
	}
	return kept, nil
}

// findMCPG looks for mcpg next to the running binary, then on PATH.
func findMCPG() string {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "mcpg")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	if p, err := exec.LookPath("mcpg"); err == nil {
		return p
	}
	return ""
}

// Run measures everything the study asks for and returns the samples
// written. Output goes to Out, or to w when Out is empty. It returns a
// *UsageError for bad settings, ErrInterrupted when ctx ends, and other
// errors for database or path failures.
func (s *Study) Run(ctx context.Context, w io.Writer) (int64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	conn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		return 0, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.Background())
	if len(s.Concurrency) > 0 {
		if err := CheckConnections(ctx, conn, slices.Max(s.Concurrency)+2); err != nil {
			return 0, err
		}
	}
	runID := ""
	var resumed int64 // sample records a resumed file keeps
	if s.Out != "" {
		f, id, done, kept, err := s.openOut()
		if err != nil {
			return 0, &UsageError{err}
		}
		defer f.Close()
		w, runID, s.Done, resumed = f, id, done, kept
	}
	if runID == "" {
		runID = NewRunID(time.Now())
		if err := perf.NewWriter(w, runID).Write(s.runRecord(ctx, conn)); err != nil {
			return 0, err
		}
	}
	r := NewRunner(s.Config, w, runID)
	err = r.Latency(ctx)
	if err == nil {
		err = r.Sweep(ctx)
	}
	interrupted := ctx.Err() != nil
	if err != nil && !interrupted {
		// No end record: the file reads as cut off, which it is, and
		// --resume continues it once the failure is mended.
		return r.Samples(), err
	}
	// The end record counts every sample in the file, kept ones included.
	end := &perf.End{FinishedAt: time.Now().UTC(), Interrupted: interrupted, Samples: resumed + r.Samples()}
	if werr := perf.NewWriter(w, runID).Write(end); werr != nil && err == nil {
		err = werr
	}
	if interrupted {
		return r.Samples(), fmt.Errorf("%w after %d samples; whole units are kept", ErrInterrupted, r.Samples())
	}
	return r.Samples(), err
}

// openOut creates Out, or with Resume rewrites it to its whole units and
// returns its run id and what is done.
func (s *Study) openOut() (*os.File, string, map[Unit]bool, int64, error) {
	if !s.Resume {
		f, err := os.OpenFile(s.Out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		return f, "", nil, 0, err
	}
	res, err := ReadResume(s.Out)
	if err != nil {
		return nil, "", nil, 0, fmt.Errorf("--resume: %w", err)
	}
	// Files from before the field was recorded used 2026-07-28.
	if v := cmp.Or(res.Run.MCPProtocol, mcp.ProtocolVersion20260728); v != s.mcpProtocol() && hasMCPPath(s.Paths) {
		return nil, "", nil, 0, fmt.Errorf("--resume: %s was measured with MCP protocol version %s; pass --mcp-protocol %s", s.Out, v, v)
	}
	if why := s.differs(res.Run); why != "" {
		return nil, "", nil, 0, fmt.Errorf("--resume: %s was measured with %s; resume it with the same settings", s.Out, why)
	}
	tmp := s.Out + ".resume"
	if err := os.WriteFile(tmp, res.Kept, 0o644); err != nil {
		return nil, "", nil, 0, err
	}
	if err := os.Rename(tmp, s.Out); err != nil {
		return nil, "", nil, 0, err
	}
	f, err := os.OpenFile(s.Out, os.O_WRONLY|os.O_APPEND, 0)
	return f, res.Run.RunID, res.Done, res.Samples, err
}

// differs names the first setting in which s differs from the run record
// of the file it resumes ("" for none): the record is the provenance of
// every sample after it, and a unit with fewer timed samples than its
// iterations reads as torn.
func (s *Study) differs(run *perf.Run) string {
	var ids []string
	for _, q := range run.Queries {
		ids = append(ids, q.ID)
	}
	own := make([]perf.Query, len(s.Queries))
	for i, q := range s.Queries {
		own[i] = perf.Query{ID: q.ID, Weight: q.Weight, Size: q.Size, SQL: q.SQL}
	}
	levels := run.Concurrency
	if !slices.Contains(run.Paths, "native") && !slices.Contains(run.Paths, "server") ||
		!slices.ContainsFunc(run.Queries, func(q perf.Query) bool { return q.ID == PointLookup }) {
		levels = nil // recorded by older versions, which ran no sweep either
	}
	switch {
	case run.Iterations != s.Iterations:
		return fmt.Sprintf("--iterations %d", run.Iterations)
	case run.Warmup != s.Warmup:
		return fmt.Sprintf("--warmup %d", run.Warmup)
	case run.MinTimeNS != s.MinTime.Nanoseconds():
		return fmt.Sprintf("--min-time %s", time.Duration(run.MinTimeNS))
	case run.TimeoutMS != s.Timeout.Milliseconds():
		return fmt.Sprintf("--timeout %s", time.Duration(run.TimeoutMS)*time.Millisecond)
	case !slices.Equal(run.Paths, s.Paths):
		return fmt.Sprintf("--paths %s", strings.Join(run.Paths, ","))
	case !slices.Equal(run.Queries, own):
		return fmt.Sprintf("other queries (ids %s, their SQL, weight and size as in its run record)", strings.Join(ids, ","))
	case !slices.Equal(levels, s.Concurrency):
		return fmt.Sprintf("--concurrency %v", levels)
	case len(s.Concurrency) > 0 && run.SweepDurationNS != s.SweepDuration.Nanoseconds():
		return fmt.Sprintf("--sweep-duration %s", time.Duration(run.SweepDurationNS))
	}
	return ""
}
