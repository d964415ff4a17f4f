package snapshot

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// previousCopy makes a finished snapshot at a target and returns its path
// and bytes, for checking that failed runs leave it alone.
func previousCopy(t *testing.T, url string) (string, []byte) {
	t.Helper()
	tgt := target(t)
	if _, err := Run(context.Background(), Options{SourceURL: url, Target: tgt, Tables: []string{"small"}}); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(tgt)
	if err != nil {
		t.Fatal(err)
	}
	return tgt, old
}

// assertUntouched checks the target's bytes and that nothing else is left
// in its directory.
func assertUntouched(t *testing.T, tgt string, old []byte) {
	t.Helper()
	now, err := os.ReadFile(tgt)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(now, old) {
		t.Errorf("target changed by a failed run")
	}
	if names := dirNames(t, filepath.Dir(tgt)); len(names) != 1 {
		t.Errorf("files left next to the target: %v", names)
	}
}

func TestFailedRunLeavesTarget(t *testing.T) {
	url := newSource(t, splitSchema+`
CREATE TYPE pair AS (a int, b text);
CREATE TABLE odd (id int, p pair, ip inet);
INSERT INTO odd VALUES (1, '(1,x)', '10.0.0.1'), (2, NULL, NULL);
CREATE EXTENSION hstore;
CREATE TABLE ext (id int, h hstore);
INSERT INTO ext VALUES (1, 'a=>1, b=>NULL');
CREATE TABLE loose (id int, n numeric);
INSERT INTO loose VALUES (1, 1.50), (2, 12345678901234567890123456789012345678901234567890.5), (3, 'NaN'), (4, NULL);`)
	tgt, old := previousCopy(t, url)
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		tables []string
		want   string
	}{
		{"missing table", []string{"small", "nope"}, "public.nope does not exist"},
		{"missing schema", []string{"ghost.small"}, "ghost.small does not exist"},
		{"unsupported type", []string{"big", "odd"}, `table public.odd: column "p": PostgreSQL type pair is not supported`},
		{"extension type", []string{"ext"}, `table public.ext: column "h": PostgreSQL type hstore is not supported`},
		{"unconstrained numeric", []string{"loose"}, `column "n": unconstrained numeric`},
		{"named twice", []string{"small", "public.small"}, "named twice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: c.tables, Strategy: Parquet})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			assertUntouched(t, tgt, old)
		})
	}
	// With TextFallback, the columns without an exact DuckDB type are
	// copied as text, and the copy verifies.
	res, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: []string{"loose", "odd", "ext"}, TextFallback: true, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tables[0].Rows != 4 {
		t.Errorf("loose: %d rows", res.Tables[0].Rows)
	}
	db := openCopy(t, tgt)
	var s string
	if err := db.QueryRow(`SELECT n FROM public.loose WHERE id = 2`).Scan(&s); err != nil || s != "12345678901234567890123456789012345678901234567890.5" {
		t.Errorf("loose.n copied as %q (%v)", s, err)
	}
	// Only the composite fell back to text; inet is copied as its own
	// output text without the flag.
	var p, ip string
	if err := db.QueryRow(`SELECT p, ip FROM public.odd WHERE id = 1`).Scan(&p, &ip); err != nil || p != "(1,x)" || ip != "10.0.0.1" {
		t.Errorf("odd copied as %q, %q (%v)", p, ip, err)
	}
	var h string
	if err := db.QueryRow(`SELECT h FROM public.ext`).Scan(&h); err != nil || h != `"a"=>"1", "b"=>NULL` {
		t.Errorf("ext.h copied as %q (%v)", h, err)
	}
}

// cancelWriter cancels a context at its first write.
type cancelWriter struct {
	once   sync.Once
	cancel context.CancelFunc
	lines  bytes.Buffer
}

func (c *cancelWriter) Write(p []byte) (int, error) {
	c.once.Do(c.cancel)
	return c.lines.Write(p)
}

func TestCancelledRunLeavesTarget(t *testing.T) {
	url := newSource(t, splitSchema+bankSchema)
	tgt, old := previousCopy(t, url)
	for _, strategy := range []Strategy{Appender, Parquet} {
		t.Run(string(strategy), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// The first progress line, written while the copy is under
			// way, cancels the run.
			w := &cancelWriter{cancel: cancel}
			_, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: []string{"accounts", "big"}, Strategy: strategy,
				ScratchDir: filepath.Dir(tgt), Readers: 2, Writers: 1, RangePages: 8, BatchRows: 100,
				Progress: w, ProgressEvery: 2 * time.Millisecond})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v, want context.Canceled", err)
			}
			if !strings.Contains(w.lines.String(), "rows/s") {
				t.Errorf("cancelled before any progress: %q", w.lines.String())
			}
			assertUntouched(t, tgt, old)
		})
	}
}

func TestVerifyFindsTamperedCopy(t *testing.T) {
	ctx := context.Background()
	url := newSource(t, splitSchema)
	tgt := target(t)
	if _, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: []string{"big", "small", "other.Mixed"}}); err != nil {
		t.Fatal(err)
	}
	db := openCopy(t, tgt)
	checks, err := Verify(ctx, VerifyOptions{SourceURL: url, DB: db})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if !c.Match || c.SourceRows != c.CopyRows || c.SourceSum != c.CopySum {
			t.Errorf("untouched copy: %+v", c)
		}
	}
	// The smallest change of a float: one unit in the last place.
	if r, err := db.Exec(`UPDATE public.big SET f = nextafter(f, 1e9) WHERE id = 4243`); err != nil {
		t.Fatal(err)
	} else if n, _ := r.RowsAffected(); n != 1 {
		t.Fatalf("updated %d rows", n)
	}
	if _, err := db.Exec(`UPDATE other."Mixed" SET c = 'zz' WHERE c = 'c1' AND b IS NULL OR tm = TIME '01:02:04'`); err != nil {
		t.Fatal(err)
	}
	checks, err = Verify(ctx, VerifyOptions{SourceURL: url, DB: db})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, c := range checks {
		got[c.Name] = c.Match
		if !c.Match && (c.Note == "" || c.SourceRows != c.CopyRows) {
			t.Errorf("mismatch report %+v", c)
		}
	}
	if got["big"] || !got["small"] || got["Mixed"] {
		t.Errorf("matches after tampering with big and Mixed: %v", got)
	}
}

// A snapshot exported by someone else (as a replication slot would) is
// imported instead of exporting one.
func TestRunImportsGivenSnapshot(t *testing.T) {
	ctx := context.Background()
	url := newSource(t, splitSchema)
	snap, err := exportSnapshot(ctx, mustConfig(t, url))
	if err != nil {
		t.Fatal(err)
	}
	defer snap.end(ctx)
	before := pgInt(t, url, "SELECT count(*) FROM small")
	pgInt(t, url, "WITH i AS (INSERT INTO small VALUES ('later', 3) RETURNING 1) SELECT count(*) FROM i")
	tgt := target(t)
	res, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: []string{"small"}, SnapshotID: snap.ID, SnapshotLSN: snap.LSN, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tables[0].Rows != before || res.SnapshotID != snap.ID || res.WALLSN != snap.LSN {
		t.Errorf("copied %d rows (snapshot had %d), id %s lsn %s", res.Tables[0].Rows, before, res.SnapshotID, res.WALLSN)
	}
}

// A copy that does not match the snapshot fails the run and never
// replaces the target.
func TestVerifyMismatchLeavesTarget(t *testing.T) {
	url := newSource(t, splitSchema)
	tgt, old := previousCopy(t, url)
	testHookBeforeVerify = func(db *sql.DB) {
		if _, err := db.Exec(`DELETE FROM public.big WHERE id = 4243`); err != nil {
			t.Error(err)
		}
	}
	defer func() { testHookBeforeVerify = nil }()
	_, err := Run(context.Background(), Options{SourceURL: url, Target: tgt, Tables: []string{"small", "big"}, Verify: true})
	var mm *MismatchError
	if !errors.As(err, &mm) || len(mm.Checks) != 2 || !mm.Checks[0].Match || mm.Checks[1].Match ||
		mm.Checks[1].CopyRows != mm.Checks[1].SourceRows-1 {
		t.Fatalf("error %v (%+v), want a mismatch of big only", err, mm)
	}
	if !strings.Contains(err.Error(), "public.big") {
		t.Errorf("error %q does not name the table", err)
	}
	assertUntouched(t, tgt, old)
}
