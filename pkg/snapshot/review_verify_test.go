// Review of keeping the copy current (verify after the source's schema
// changed between refreshes), 2026-12-05. Each test states the correct
// behaviour.

package snapshot

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// rvCopyThenAlter copies t(a int, b text) and then runs alter on the source.
func rvCopyThenAlter(t *testing.T, alter string) (url, tgt string) {
	t.Helper()
	ctx := context.Background()
	url = newSource(t, `CREATE TABLE t (a int, b text); INSERT INTO t SELECT i, 'x' || i FROM generate_series(1, 100) i;`)
	tgt = target(t)
	if _, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: []string{"t"}}); err != nil {
		t.Fatal(err)
	}
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, alter); err != nil {
		t.Fatal(err)
	}
	return url, tgt
}

// A column dropped in PostgreSQL after the snapshot: the copy still has
// column b, the source no longer does, yet Verify checksums only the
// source's columns on both sides and reports the table as matching
// (qpanalytics verify exits 0), although the copy differs from the source.
func TestVerifyReviewVerifyDroppedColumnIsMismatch(t *testing.T) {
	url, tgt := rvCopyThenAlter(t, "ALTER TABLE t DROP COLUMN b")
	checks, err := Verify(context.Background(), VerifyOptions{SourceURL: url, Target: tgt})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if len(checks) != 1 || checks[0].Match {
		t.Fatalf("copy has column b that the source dropped; Verify says %+v, want Match false", checks)
	}
	if !strings.Contains(checks[0].Note, "columns differ") || !strings.Contains(checks[0].Note, ", the copy (a, b)") {
		t.Errorf("note %q should name both column lists", checks[0].Note)
	}
}

// A column added (or renamed) in PostgreSQL after the snapshot: Verify
// builds the DuckDB checksum query from the source's columns, DuckDB fails
// to bind the missing column, and Verify returns an error ("failing to
// compare at all", exit 1) instead of reporting the table as differing
// (Match false, exit 3 "verify found a table that differs").
func TestVerifyReviewVerifyAddedColumnIsMismatch(t *testing.T) {
	for _, alter := range []string{"ALTER TABLE t ADD COLUMN c int DEFAULT 5", "ALTER TABLE t RENAME COLUMN b TO bb"} {
		url, tgt := rvCopyThenAlter(t, alter)
		checks, err := Verify(context.Background(), VerifyOptions{SourceURL: url, Target: tgt})
		if err != nil {
			t.Errorf("%s: verify failed instead of reporting a difference: %v", alter, err)
			continue
		}
		if len(checks) != 1 || checks[0].Match {
			t.Errorf("%s: Verify says %+v, want Match false", alter, checks)
		}
	}
}
