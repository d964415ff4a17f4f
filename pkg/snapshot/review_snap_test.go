// Snapshot behaviour checked by a review of 2026-12-05; where a test's
// comment names a fault, it is what the code did before the fix.

package snapshot

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A table with a stored generated column, small enough to be one range.
//
// Wrong: a table that fits one range (or any table with one reader) is read
// with the plain `COPY t (cols) TO STDOUT`, and PostgreSQL (<= 17) refuses
// generated columns in a COPY column list ("column "g" is a generated
// column ... Generated columns cannot be used in COPY"). The ranged form
// (COPY (SELECT ...)) works, so the same table copies or fails depending on
// its size and the reader count.
// Expected: generated columns are ordinary columns of a plain table
// (docs/qpanalytics-snapshot.md "Describing tables": columns from
// pg_attribute in attnum order); the copy succeeds and holds their values.
func TestSnapReviewGeneratedColumnWholeTable(t *testing.T) {
	ctx := context.Background()
	url := newSource(t, `
CREATE TABLE gen (id int, g int GENERATED ALWAYS AS (id * 2) STORED);
INSERT INTO gen (id) SELECT generate_series(1, 100);`)
	tgt := target(t)
	_, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: []string{"gen"}, Readers: 1, Writers: 1, Verify: true})
	if err != nil {
		t.Fatalf("snapshot of a table with a generated column: %v", err)
	}
	db := openCopy(t, tgt)
	if n := queryInt(t, db, `SELECT sum(g) FROM public.gen`); n != 10100 {
		t.Errorf("sum(g) = %d, want 10100", n)
	}
}

// A materialized view small enough to be one range.
//
// Wrong: the docs allow materialized views ("Plain tables and materialized
// views are allowed"), but a matview that fits one range is read with the
// plain `COPY mv (cols) TO STDOUT`, which PostgreSQL refuses ("cannot copy
// from materialized view"; only COPY (SELECT ...) works for matviews).
// Expected: the matview is copied.
func TestSnapReviewMaterializedViewWholeTable(t *testing.T) {
	ctx := context.Background()
	url := newSource(t, `
CREATE TABLE base (id int, v text);
INSERT INTO base SELECT i, 'v' || i FROM generate_series(1, 50) i;
CREATE MATERIALIZED VIEW mv AS SELECT id, v FROM base WHERE id % 2 = 0;`)
	tgt := target(t)
	_, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: []string{"mv"}, Readers: 1, Writers: 1})
	if err != nil {
		t.Fatalf("snapshot of a materialized view: %v", err)
	}
	db := openCopy(t, tgt)
	if n := queryInt(t, db, `SELECT count(*) FROM public.mv`); n != 25 {
		t.Errorf("copy of mv has %d rows, want 25", n)
	}
}

// An inheritance parent with a child table.
//
// Wrong: the ranged reads are `COPY (SELECT ... FROM parent WHERE ctid ...)`
// without ONLY, so they also return every child's rows (matched by the
// child's own ctids), while a one-range read `COPY parent TO` returns only
// the parent's own rows; the table's size (pg_relation_size) is the
// parent's alone. So the row set depends on the range split, and verify
// (also without ONLY) counts the children even when the copy did not.
// Expected: the copy of a table is that relation's rows, as `COPY parent TO`
// gives (PostgreSQL: COPY TO "does not copy rows from child tables"),
// whatever the number of readers and ranges, and verify agrees with it.
func TestSnapReviewInheritanceParent(t *testing.T) {
	ctx := context.Background()
	url := newSource(t, `
CREATE TABLE parent (id int, pad text);
INSERT INTO parent SELECT i, repeat('p', 200) FROM generate_series(1, 2000) i;
CREATE TABLE child (extra int) INHERITS (parent);
INSERT INTO child SELECT i, repeat('c', 200), i FROM generate_series(100001, 100500) i;`)
	own := pgInt(t, url, `SELECT count(*) FROM ONLY parent`)
	t.Run("ranges", func(t *testing.T) {
		tgt := target(t)
		res, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: []string{"parent"}, Readers: 2, Writers: 1, RangePages: 5})
		if err != nil {
			t.Fatal(err)
		}
		if res.Tables[0].Rows != own {
			t.Errorf("copied %d rows of parent with %d ranges, want its own %d (child rows leaked in)", res.Tables[0].Rows, res.Tables[0].Ranges, own)
		}
	})
	t.Run("one range with verify", func(t *testing.T) {
		tgt := target(t)
		_, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: []string{"parent"}, Readers: 1, Writers: 1, Verify: true})
		if err != nil {
			t.Fatalf("verify of a whole-table copy of an inheritance parent: %v", err)
		}
	})
}

// Many types and edge values, dropped and added columns, odd names, with
// both strategies, verified inside the snapshot and standalone. (Passes:
// recorded as an area checked.)
func TestSnapReviewTypeFidelity(t *testing.T) {
	ctx := context.Background()
	url := newSource(t, `
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN posint AS int CHECK (VALUE > 0);
CREATE SCHEMA "Sch ema";
CREATE TABLE "Sch ema"."Tä ble ""q""" (
  "select" int, dropme text, i2 int2, i4 int4, i8 int8, b bool, f4 real, f8 float8,
  n numeric(38,0), nn numeric(5,-2), n38 numeric(38,10),
  t text, vc varchar(5), c char(5), by bytea, d date, ts timestamp, tz timestamptz,
  tm time, ttz timetz, iv interval, u uuid, j json, jb jsonb, arr int[], tarr text[],
  e mood, dm posint, "MiXeD" text);
ALTER TABLE "Sch ema"."Tä ble ""q""" DROP COLUMN dropme;
INSERT INTO "Sch ema"."Tä ble ""q""" VALUES
 (1, -32768, -2147483648, -9223372036854775808, true, '-0', 'NaN', 99999999999999999999999999999999999999, 9999900, -9999999999999999999999999999.9999999999,
  'ünï ☃ 𝄞', 'abcde', 'ab', '\x00ff00', '4713-01-01 BC', '4713-01-01 00:00:00 BC', '294246-12-31 23:59:59.999999+00',
  '24:00:00', '24:00:00-15:59', '-1 year -2 mons +3 days -04:05:06.000007', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  '{"b":1,  "a":[1,2]}', '{"b":1, "a":[1,2]}', '{1,NULL,3}', '{"a",NULL,""}', 'happy', 7, 'x'),
 (2, 32767, 2147483647, 9223372036854775807, false, 'Infinity', '-Infinity', -99999999999999999999999999999999999999, -9999900, 0,
  '', '', '', '', 'infinity', 'infinity', '-infinity', '00:00:00', '00:00:00+15:59', '178000000 years', NULL,
  'null', 'null', '{}', '{}', 'sad', 1, NULL),
 (3, NULL, NULL, NULL, NULL, '1.4e-45', '4.9e-324', NULL, NULL, NULL, NULL, NULL, NULL, NULL, '-infinity', '-infinity', 'infinity',
  NULL, NULL, '1 mon -30 days', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
ALTER TABLE "Sch ema"."Tä ble ""q""" ADD COLUMN later int DEFAULT 42;
ALTER TABLE "Sch ema"."Tä ble ""q""" ADD COLUMN later_ts timestamptz DEFAULT '2020-01-01 00:00:00+00';
CREATE UNLOGGED TABLE unl (id int);
INSERT INTO unl SELECT generate_series(1, 10);
CREATE TABLE zero (id int);
CREATE TABLE ext (iv interval, ts timestamp, f8 float8);
INSERT INTO ext VALUES ('-178956970 years -8 mons -2147483647 days -2562047788:00:54.775807', '294247-01-10 04:00:54.775806', 1.7976931348623157e308),
  ('178956970 years 7 mons 2147483647 days 2562047788:00:54.775807', '4714-11-24 00:00:00 BC', 5e-324), ('0', '2000-01-01', '-0'), ('1 day', '2000-01-02', NULL);
`)
	for _, strat := range []Strategy{Appender, Parquet} {
		t.Run(string(strat), func(t *testing.T) {
			tgt := target(t)
			_, err := Run(ctx, Options{SourceURL: url, Target: tgt, Strategy: strat, Readers: 2, Writers: 2,
				Tables: []string{`Sch ema.Tä ble "q"`, "unl", "zero", "ext"}, Verify: true})
			if err != nil {
				t.Fatal(err)
			}
			checks, err := Verify(ctx, VerifyOptions{SourceURL: url, Target: tgt})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range checks {
				if !c.Match {
					t.Errorf("verify: %+v", c)
				}
			}
			db := openCopy(t, tgt)
			var later int64
			var nn string
			if err := db.QueryRow(`SELECT later, CAST(nn AS VARCHAR) FROM "Sch ema"."Tä ble ""q""" WHERE "select" = 1`).Scan(&later, &nn); err != nil {
				t.Fatal(err)
			}
			if later != 42 || nn != "9999900" {
				t.Errorf("later %d nn %s", later, nn)
			}
			var cols int64
			if err := db.QueryRow(`SELECT count(*) FROM information_schema.columns WHERE table_schema = 'Sch ema' AND column_name = 'dropme'`).Scan(&cols); err != nil || cols != 0 {
				t.Errorf("dropped column in copy: %d %v", cols, err)
			}
		})
	}
}

// numeric(p,s) with s >= p, e.g. numeric(4,4) (a common type for rates) or
// PostgreSQL 15's numeric(3,5).
//
// Wrong: the values are copied exactly (DECIMAL(4,4), DECIMAL(5,5)), but
// the checksum's DuckDB rendering (checksum.go, renderers, case
// NumericOID) is CAST(x AS VARCHAR) with trailing zeros trimmed, and DuckDB
// prints a DECIMAL(w,w) without the leading zero: ".1234", "-.0001", and
// 0 as ".0000" which trims to "" - while PostgreSQL's trim_scale(x)::text
// gives "0.1234", "-0.0001", "0". So Options.Verify fails every such copy
// with a MismatchError (and standalone Verify reports a mismatch, exit 3).
// Expected: docs/qpanalytics-snapshot.md "numeric without trailing
// fractional zeros" rendered the same by both engines; an exact copy
// verifies.
func TestSnapReviewVerifyNumericScaleAtLeastPrecision(t *testing.T) {
	ctx := context.Background()
	url := newSource(t, `
CREATE TABLE rates (id int, r numeric(4,4), s numeric(3,5));
INSERT INTO rates VALUES (1, 0.1234, 0.00999), (2, 0, -0.00001), (3, -0.0001, 0), (4, NULL, NULL);`)
	tgt := target(t)
	if _, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: []string{"rates"}, Readers: 1, Writers: 1, Verify: true}); err != nil {
		t.Fatalf("Options.Verify on an exact copy: %v", err)
	}
}

// Wrong: the record's taken_at is the pgx-scanned now(), a time.Time in the
// process's local zone (pgx returns timestamptz in time.Local), so with
// TZ set to anything but UTC the snapshot line on stdout carries a local
// offset ("...+05:30").
// Expected: docs/formats.md, qpanalytics records: `taken_at` is "RFC 3339
// UTC" (the example ends in "Z").
func TestSnapReviewRecordTakenAtUTC(t *testing.T) {
	ctx := context.Background()
	url := newSource(t, `CREATE TABLE one (id int); INSERT INTO one VALUES (1);`)
	old := time.Local
	time.Local = time.FixedZone("IST", 5*3600+1800)
	defer func() { time.Local = old }()
	res, err := Run(ctx, Options{SourceURL: url, Target: target(t), Tables: []string{"one"}, Readers: 1, Writers: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res.Record(false))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		TakenAt string `json:"taken_at"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(rec.TakenAt, "Z") {
		t.Errorf("taken_at %q is not UTC", rec.TakenAt)
	}
}

// Permission denied on one table fails the run naming it, leaving nothing
// next to the target. (Passes: recorded as an area checked.)
func TestSnapReviewPermissionDenied(t *testing.T) {
	ctx := context.Background()
	role := fmt.Sprintf("review_lo_%d", dbSeq.Add(1))
	url := newSource(t, `
CREATE TABLE open_t (id int); INSERT INTO open_t VALUES (1);
CREATE TABLE secret (id int); INSERT INTO secret VALUES (1);
CREATE ROLE `+role+` LOGIN;
GRANT SELECT ON open_t TO `+role+`;`)
	lo := strings.Replace(url, "postgres@", role+"@", 1)
	tgt := target(t)
	_, err := Run(ctx, Options{SourceURL: lo, Target: tgt, Tables: []string{"open_t", "secret"}, Readers: 2, Writers: 1})
	if err == nil || !strings.Contains(err.Error(), "public.secret") || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("error %v, want permission denied naming public.secret", err)
	}
	if names := dirNames(t, filepath.Dir(tgt)); len(names) != 0 {
		t.Errorf("left behind: %v", names)
	}
	if _, err := Run(ctx, Options{SourceURL: "postgres://%zz", Target: tgt, Tables: []string{"open_t"}}); err == nil {
		t.Error("bad URL accepted")
	}
}

// NULL dates and timestamps.
//
// Wrong: the checksum's DuckDB rendering of date, timestamp and
// timestamptz (checksum.go, renderers) is CASE WHEN isfinite(x) THEN ...
// WHEN x > epoch THEN 'infinity' ELSE '-infinity' END; for NULL both tests
// are NULL, so the ELSE gives '-infinity' and the field is "9:-infinity"
// instead of "N", while PostgreSQL's side (ELSE x::text) stays NULL. Any
// table with a NULL in such a column (or a NULL element in such an array)
// fails Options.Verify and standalone verify, though the copy is exact.
// Expected: NULL renders as NULL ("N") in both engines
// (docs/qpanalytics-snapshot.md, Verification); an exact copy verifies.
func TestSnapReviewVerifyNullTimestamps(t *testing.T) {
	ctx := context.Background()
	url := newSource(t, `
CREATE TABLE ev (id int, d date, ts timestamp, tz timestamptz, tsa timestamp[]);
INSERT INTO ev VALUES (1, '2020-01-01', '2020-01-01 10:00', '2020-01-01 10:00+00', '{2020-01-01}'),
  (2, NULL, NULL, NULL, '{NULL}');`)
	tgt := target(t)
	if _, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: []string{"ev"}, Readers: 1, Writers: 1, Verify: true}); err != nil {
		t.Fatalf("Options.Verify on an exact copy: %v", err)
	}
}

// Partitioned parents and views are refused by name before any data moves;
// a leaf partition copies. (Passes: recorded as an area checked.)
func TestSnapReviewRelkinds(t *testing.T) {
	ctx := context.Background()
	url := newSource(t, `
CREATE TABLE pt (id int, v text) PARTITION BY RANGE (id);
CREATE TABLE pt_1 PARTITION OF pt FOR VALUES FROM (0) TO (1000);
CREATE TABLE pt_2 PARTITION OF pt FOR VALUES FROM (1000) TO (3000);
INSERT INTO pt SELECT i, repeat('x', 100) FROM generate_series(0, 2999) i;
CREATE VIEW vw AS SELECT * FROM pt;`)
	tgt := target(t)
	for _, c := range []struct{ name, want string }{{"pt", "public.pt is not a plain table"}, {"vw", "public.vw is not a plain table"}} {
		_, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: []string{c.name}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	res, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: []string{"pt_2"}, Readers: 2, RangePages: 3, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tables[0].Rows != 2000 {
		t.Errorf("pt_2: %d rows", res.Tables[0].Rows)
	}
}
