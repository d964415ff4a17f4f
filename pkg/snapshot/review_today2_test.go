package snapshot

import (
	"context"
	"testing"
)

// Since today Verify compares a table's columns before checksumming it,
// and says (verify.go) a table whose columns were "added, dropped,
// renamed, retyped" since the copy is a mismatch with a note, "not a
// binder error". Only the names are compared: a column whose type changed
// in PostgreSQL (int to date, int to int[]) passes the check, the DuckDB
// checksum built for the new type is bound to the copy's old column, and
// Verify fails altogether with a binder error (qpanalytics verify exit 1,
// every table unverified) instead of reporting that table as differing
// (exit 3).
func TestTodayReviewVerifyRetypedColumnIsMismatch(t *testing.T) {
	for _, alter := range []string{
		"ALTER TABLE t ALTER COLUMN a TYPE date USING date '2020-01-01' + a",
		"ALTER TABLE t ALTER COLUMN a TYPE int[] USING array[a]",
	} {
		url, tgt := rvCopyThenAlter(t, alter)
		checks, err := Verify(context.Background(), VerifyOptions{SourceURL: url, Target: tgt})
		if err != nil {
			t.Errorf("%s: verify failed instead of reporting a difference: %v", alter, err)
			continue
		}
		if len(checks) != 1 || checks[0].Match || checks[0].Note == "" {
			t.Errorf("%s: Verify says %+v, want Match false with a note on the columns", alter, checks)
		}
	}
}
