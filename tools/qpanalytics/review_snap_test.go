// Snapshot behaviour checked by a review of 2026-12-05; where a test's
// comment names a fault, it is what the code did before the fix.

package main

import (
	"bytes"
	"context"
	"testing"
)

// Wrong: docs/qpanalytics.md says "Every flag is also an environment
// variable (QPANALYTICS_<FLAG>)", but snapshot's --interval flag reads
// QPANALYTICS_PROGRESS_INTERVAL (commands.go, snapshotCmd.Interval), so
// QPANALYTICS_INTERVAL is silently ignored (here a bad value does not even
// fail parsing; the run goes on to connect and fails with exit 1).
// Expected: QPANALYTICS_INTERVAL is honoured, so the bad duration is a
// usage error, exit 2 (or the flag is named --progress-interval).
func TestSnapReviewIntervalEnvName(t *testing.T) {
	t.Setenv("QPANALYTICS_INTERVAL", "not-a-duration")
	var out, errs bytes.Buffer
	code := run(context.Background(), []string{"snapshot", "--source", "postgres://x@127.0.0.1:1/x?connect_timeout=1",
		"--tables", "t", "--target", t.TempDir() + "/x.duckdb", "--progress", "never"}, &out, &errs)
	if code != exitUsage {
		t.Errorf("QPANALYTICS_INTERVAL=not-a-duration: exit %d, want %d (usage)\n%s", code, exitUsage, errs.String())
	}
	if out.Len() != 0 {
		t.Errorf("stdout not empty on failure: %q", out.String())
	}
}
