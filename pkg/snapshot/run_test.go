package snapshot

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// A schema of tables that exercises the splitting: a table of many pages
// with deleted rows, a one-page table, an empty table, and a table in
// another schema with many types.
const splitSchema = `
CREATE TABLE big (id int PRIMARY KEY, pad text NOT NULL, f float8, n numeric(12,2));
INSERT INTO big SELECT i, repeat('x', 100 + i % 50), i / 7.0, i * 1.25 FROM generate_series(1, 20000) i;
DELETE FROM big WHERE id % 7 = 0 OR id BETWEEN 5000 AND 6000;
CREATE TABLE small (k text, v int);
INSERT INTO small VALUES ('a', 1), ('b', NULL);
CREATE TABLE empty (id bigint, t timestamptz);
CREATE SCHEMA other;
CREATE TABLE other."Mixed" (b bool, d date, ts timestamp, tz timestamptz, u uuid, j jsonb, by bytea, c char(4), i interval, tm time, r real, arr int[]);
INSERT INTO other."Mixed" SELECT i % 2 = 0, date '2000-01-01' + i, timestamp '2000-01-01' + i * interval '1 minute',
	now(), gen_random_uuid(), jsonb_build_object('i', i), decode(md5(i::text), 'hex'), 'c' || i % 10,
	i * interval '1 day 1 second', time '01:02:03' + i * interval '1 second', i / 3.0, ARRAY[i, NULL]
FROM generate_series(1, 500) i;
`

func TestRunAppenderSplitsAndVerifies(t *testing.T) {
	ctx := context.Background()
	url := newSource(t, splitSchema)
	tgt := target(t)
	var progress bytes.Buffer
	res, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: []string{"big", "small", "public.empty", "other.Mixed"},
		Readers: 3, Writers: 2, RangePages: 7, BatchRows: 1000, Verify: true, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"big": pgInt(t, url, "SELECT count(*) FROM big"), "small": 2, "empty": 0, "Mixed": 500}
	for _, tr := range res.Tables {
		if tr.Rows != want[tr.Name] {
			t.Errorf("%s: %d rows, want %d", tr.Name, tr.Rows, want[tr.Name])
		}
		if tr.Name == "big" && (tr.Pages < 100 || tr.Ranges != int((tr.Pages+6)/7)) {
			t.Errorf("big: %d pages in %d ranges", tr.Pages, tr.Ranges)
		}
	}
	if len(res.Checks) != 4 {
		t.Fatalf("%d checks", len(res.Checks))
	}
	// Standalone, by path (read-only), before anything else opens the file.
	checks, err := Verify(ctx, VerifyOptions{SourceURL: url, Target: tgt, Readers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 4 {
		t.Errorf("%d checks", len(checks))
	}
	for _, c := range checks {
		if !c.Match {
			t.Errorf("standalone verify: %+v", c)
		}
	}
	db := openCopy(t, tgt)
	if n := queryInt(t, db, `SELECT count(*) FROM public.big`); n != want["big"] {
		t.Errorf("copy has %d rows of big, want %d", n, want["big"])
	}
	if n := queryInt(t, db, `SELECT count(DISTINCT id) FROM public.big`); n != want["big"] {
		t.Errorf("copy has %d distinct ids of big, want %d", n, want["big"])
	}
	m, err := ReadMeta(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if m.SnapshotID != res.SnapshotID || m.WALLSN == "" || len(m.Tables) != 4 || m.Readers != 3 || m.Writers != 2 || m.Strategy != Appender {
		t.Errorf("meta %+v", m)
	}
	if d := time.Since(m.TakenAt); d < 0 || d > time.Minute || !m.TakenAt.Equal(res.TakenAt) {
		t.Errorf("meta taken at %v, result %v", m.TakenAt, res.TakenAt)
	}
	if strings.Contains(m.SourceHost, "postgres@") || m.SourceDB == "" {
		t.Errorf("meta source %q %q", m.SourceHost, m.SourceDB)
	}
	if !strings.Contains(progress.String(), "public.big: done, ") {
		t.Errorf("progress output:\n%s", progress.String())
	}
	t.Logf("progress:\n%s", progress.String())
}

func TestRunParquet(t *testing.T) {
	ctx := context.Background()
	url := newSource(t, splitSchema)
	dir := t.TempDir()
	scratch := t.TempDir()
	tgt := dir + "/copy.duckdb"
	res, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: []string{"big", "small", "empty", "other.Mixed"},
		Strategy: Parquet, ScratchDir: scratch, Readers: 2, Writers: 2, RangePages: 20, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Strategy != Parquet || len(res.Checks) != 4 {
		t.Errorf("result %+v", res)
	}
	if got := dirNames(t, scratch); len(got) != 0 {
		t.Errorf("scratch files left: %v", got)
	}
	if got := dirNames(t, dir); len(got) != 1 {
		t.Errorf("target directory holds %v", got)
	}
	db := openCopy(t, tgt)
	if n, want := queryInt(t, db, `SELECT count(*) FROM public.big`), pgInt(t, url, "SELECT count(*) FROM big"); n != want {
		t.Errorf("copy has %d rows of big, want %d", n, want)
	}
	checks, err := Verify(ctx, VerifyOptions{SourceURL: url, DB: db})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if !c.Match {
			t.Errorf("standalone verify: %+v", c)
		}
	}
}

// Pages the size measurement missed are still read: the last range of a
// table is open ended. Readers are capped by the number of ranges.
func TestRunReadsPastMeasuredSize(t *testing.T) {
	ctx := context.Background()
	url := newSource(t, splitSchema)
	testHookTables = func(ts []*table) {
		for _, tb := range ts {
			tb.Pages = min(tb.Pages, 3) // big really has hundreds of pages
		}
	}
	defer func() { testHookTables = nil }()
	res, err := Run(ctx, Options{SourceURL: url, Target: target(t), Tables: []string{"big", "small", "empty"},
		Readers: 8, Writers: 1, RangePages: 1, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := pgInt(t, url, "SELECT count(*) FROM big"); res.Tables[0].Rows != want || res.Tables[0].Ranges != 3 {
		t.Errorf("big: %d rows in %d ranges, want %d rows in 3", res.Tables[0].Rows, res.Tables[0].Ranges, want)
	}
	if res.Readers != 5 { // 3 + 1 + 1 ranges
		t.Errorf("%d readers for 5 ranges", res.Readers)
	}
}
