package duckload

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/copybin"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// rvPG connects to the shared cluster with UTC settings.
func rvPG(t *testing.T) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.Shared(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	if _, err := conn.Exec(ctx, copybin.TextSettings); err != nil {
		t.Fatal(err)
	}
	return conn
}

func rvExec(t *testing.T, conn *pgx.Conn, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := conn.Exec(context.Background(), s); err != nil {
			t.Fatalf("%.80s: %v", s, err)
		}
	}
}

// rvCopy loads PostgreSQL table rel into DuckDB table "dst" through the
// appender (parquet=false) or a Parquet file; it returns the first error.
func rvCopy(t *testing.T, conn *pgx.Conn, db *sql.DB, rel, dst string, parquet bool) error {
	t.Helper()
	ctx := context.Background()
	cols, err := copybin.LookupColumns(ctx, conn, rel)
	if err != nil {
		return err
	}
	if err := CreateTable(ctx, db, "", dst, cols); err != nil {
		return err
	}
	var sel string
	for i, c := range cols {
		if i > 0 {
			sel += ", "
		}
		sel += c.SelectExpr()
	}
	var buf bytes.Buffer
	if _, err := conn.PgConn().CopyTo(ctx, &buf, "COPY (SELECT "+sel+" FROM "+rel+") TO STDOUT (FORMAT binary)"); err != nil {
		return err
	}
	if !parquet {
		return appendAll(ctx, db, "", dst, cols, &buf, 1000)
	}
	path := filepath.Join(t.TempDir(), dst+".parquet")
	if err := writeParquet(path, cols, &buf, 1000); err != nil {
		return err
	}
	return LoadParquet(ctx, db, "", dst, []string{path})
}

func rvOne(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	var s sql.NullString
	if err := db.QueryRow(q).Scan(&s); err != nil {
		return "ERROR: " + err.Error()
	}
	if !s.Valid {
		return "NULL"
	}
	return s.String
}

func rvPGOne(t *testing.T, conn *pgx.Conn, q string) string {
	t.Helper()
	var s *string
	if err := conn.QueryRow(context.Background(), q).Scan(&s); err != nil {
		return "ERROR: " + err.Error()
	}
	if s == nil {
		return "NULL"
	}
	return *s
}

// TestTypesReviewParquetHiveDir: LoadParquet reads files whose directory looks
// like a Hive partition ("region=eu", "dt=2024-06-01"). DuckDB's read_parquet
// auto-detects Hive partitioning, so a matching column is overwritten with the
// directory's value for every row, and a non-matching key adds a column that
// makes the INSERT fail. The scratch directory is the target's directory
// (snapshot/parquet.go), so /data/dt=2024-06-01/analytics.duckdb triggers it.
func TestTypesReviewParquetHiveDir(t *testing.T) {
	conn := rvPG(t)
	ctx := context.Background()
	rvExec(t, conn, "DROP TABLE IF EXISTS zzhive", "CREATE TABLE zzhive (id int, region text)",
		"INSERT INTO zzhive VALUES (1,'eu'),(2,'us'),(3,NULL)")
	cols, err := copybin.LookupColumns(ctx, conn, "zzhive")
	if err != nil {
		t.Fatal(err)
	}
	want := rvPGOne(t, conn, "SELECT string_agg(id || ':' || coalesce(region, 'NULL'), ',' ORDER BY id) FROM zzhive")
	for _, sub := range []string{"region=eu", "dt=2024-06-01"} {
		db := openDuck(t)
		if err := CreateTable(ctx, db, "", "zzhive", cols); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := conn.PgConn().CopyTo(ctx, &buf, "COPY (SELECT * FROM zzhive ORDER BY id) TO STDOUT (FORMAT binary)"); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), sub)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "t0-w0.parquet")
		if err := writeParquet(path, cols, &buf, 1000); err != nil {
			t.Fatal(err)
		}
		if err := LoadParquet(ctx, db, "", "zzhive", []string{path}); err != nil {
			t.Errorf("file under %s/: LoadParquet: %v", sub, err)
			continue
		}
		if got := rvOne(t, db, "SELECT string_agg(id || ':' || coalesce(region, 'NULL'), ',' ORDER BY id) FROM zzhive"); got != want {
			t.Errorf("file under %s/: DuckDB rows %s, PostgreSQL %s", sub, got, want)
		}
	}
}

// TestTypesReviewEnumOrder: enums become VARCHAR, so ORDER BY, min/max and
// comparisons follow the labels' spelling instead of the enum's declared
// order, although DuckDB has an ENUM type that keeps that order.
func TestTypesReviewEnumOrder(t *testing.T) {
	t.Skip("known difference (docs/qpanalytics-types.md, enums): the copy keeps enums as VARCHAR, so they sort by label text")
	conn := rvPG(t)
	rvExec(t, conn, "DROP TABLE IF EXISTS zzord", "DROP TYPE IF EXISTS zzmood", "CREATE TYPE zzmood AS ENUM ('sad','ok','happy')",
		"CREATE TABLE zzord (id int, m zzmood)",
		"INSERT INTO zzord VALUES (1,'sad'),(2,'ok'),(3,'happy'),(4,'ok')")
	want := rvPGOne(t, conn, "SELECT string_agg(m::text, ',' ORDER BY m, id) || ' max=' || max(m)::text || ' lt=' || count(*) FILTER (WHERE m < 'happy')::text FROM zzord")
	db := openDuck(t)
	if err := rvCopy(t, conn, db, "zzord", "zzord", false); err != nil {
		t.Fatal(err)
	}
	got := rvOne(t, db, "SELECT string_agg(m::VARCHAR, ',' ORDER BY m, id) || ' max=' || max(m)::VARCHAR || ' lt=' || (count(*) FILTER (WHERE m < 'happy'))::VARCHAR FROM zzord")
	if got != want {
		t.Errorf("enum column: DuckDB %q, PostgreSQL %q (DuckDB type %s)", got, want, rvOne(t, db, "SELECT typeof(m) FROM zzord LIMIT 1"))
	}
}

// TestTypesReviewParquetIntervalMin: the Parquet path writes intervals as
// "M months D days U microseconds" text, which DuckDB cannot read back when
// U is the smallest int64, a value PostgreSQL 15 holds (and the appender
// path copies).
func TestTypesReviewParquetIntervalMin(t *testing.T) {
	conn := rvPG(t)
	rvExec(t, conn, "DROP TABLE IF EXISTS zziv", "CREATE TABLE zziv (x interval)",
		"INSERT INTO zziv VALUES ('-2562047788:00:54.775807'::interval - '1 microsecond'::interval)")
	want := rvPGOne(t, conn, "SELECT x::text FROM zziv")
	db := openDuck(t)
	if err := rvCopy(t, conn, db, "zziv", "zziv", true); err != nil {
		t.Fatalf("interval %s through Parquet: %v", want, err)
	}
	if got := rvOne(t, db, "SELECT x::VARCHAR FROM zziv"); got != want {
		t.Errorf("interval: DuckDB %q, PostgreSQL %q", got, want)
	}
}

// TestTypesReviewJSONLoneSurrogate: PostgreSQL's json accepts a lone surrogate
// escape ("\ud800"; JavaScript's JSON.stringify writes such escapes) and its
// json functions work on it. The appender writes it into a DuckDB JSON column
// unchecked, where every JSON function over the row fails ("Malformed
// JSON"); the Parquet path instead fails the whole load. Either the copy must
// stop with an error naming the column, or DuckDB must answer as PostgreSQL.
func TestTypesReviewJSONLoneSurrogate(t *testing.T) {
	conn := rvPG(t)
	rvExec(t, conn, "DROP TABLE IF EXISTS zzjs", "CREATE TABLE zzjs (id int, j json)",
		`INSERT INTO zzjs VALUES (1, '["\ud800", 2]'), (2, '[1]')`)
	want := rvPGOne(t, conn, "SELECT string_agg(json_array_length(j)::text, ',' ORDER BY id) FROM zzjs")
	db := openDuck(t)
	err := rvCopy(t, conn, db, "zzjs", "zzjs", false)
	if err != nil {
		if !strings.Contains(err.Error(), "column j") {
			t.Errorf("copy refused the value without naming the column: %v", err)
		}
		return
	}
	if got := rvOne(t, db, "SELECT string_agg(json_array_length(j)::VARCHAR, ',' ORDER BY id) FROM zzjs"); got != want {
		t.Errorf("copy accepted the json, but DuckDB answers json_array_length with %q; PostgreSQL %q", got, want)
	}
}
