package copybin_test

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"io"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/copybin"
	"github.com/qpkit/qpkit/pkg/duckload"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

func rvPG(t *testing.T, stmts ...string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.Shared(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	for _, s := range append([]string{copybin.TextSettings}, stmts...) {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%.100s: %v", s, err)
		}
	}
	return conn
}

func rvDuck(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec("SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	return db
}

// rvCopy copies PostgreSQL relation rel into DuckDB table dst through
// LookupColumns, the decoder and duckload's appender, as snapshot does.
func rvCopy(t *testing.T, conn *pgx.Conn, db *sql.DB, rel, dst string) error {
	t.Helper()
	ctx := context.Background()
	cols, err := copybin.LookupColumns(ctx, conn, rel)
	if err != nil {
		return err
	}
	if err := duckload.CreateTable(ctx, db, "", dst, cols); err != nil {
		return err
	}
	sel := ""
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
	c, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	var sink *duckload.AppenderSink
	if err := c.Raw(func(dc any) error {
		sink, err = duckload.NewAppenderSink(dc.(driver.Conn), "", dst, cols)
		return err
	}); err != nil {
		return err
	}
	dec, err := copybin.NewDecoder(&buf, cols)
	if err != nil {
		sink.Close()
		return err
	}
	var b copybin.Batch
	for {
		_, err := dec.Next(&b, 0)
		if err == io.EOF {
			return sink.Close()
		}
		if err == nil {
			err = sink.Write(&b)
		}
		if err != nil {
			sink.Close()
			return err
		}
	}
}

func rvDuckOne(db *sql.DB, q string) string {
	var s sql.NullString
	if err := db.QueryRow(q).Scan(&s); err != nil {
		return "ERROR: " + err.Error()
	}
	if !s.Valid {
		return "NULL"
	}
	return s.String
}

func rvPGOne(conn *pgx.Conn, q string) string {
	var s *string
	if err := conn.QueryRow(context.Background(), q).Scan(&s); err != nil {
		return "ERROR: " + err.Error()
	}
	if s == nil {
		return "NULL"
	}
	return *s
}

// rvCompare runs each pair of queries (PostgreSQL, DuckDB) and reports the
// ones whose answers differ.
func rvCompare(t *testing.T, conn *pgx.Conn, db *sql.DB, what string, qs [][2]string) {
	t.Helper()
	for _, q := range qs {
		if w, g := rvPGOne(conn, q[0]), rvDuckOne(db, q[1]); w != g {
			t.Errorf("%s: PostgreSQL %q, DuckDB after the copy %q\n  pg:   %s\n  duck: %s", what, w, g, q[0], q[1])
		}
	}
}

// TestCopybinReviewTextTypesOrder: pg_lsn, inet, int4range and tid are stored
// as their output text (VARCHAR), so DuckDB orders them as strings:
// max(lsn) of '9/FFFFFFFF' and '10/0' is '9/FFFFFFFF', and 10.0.0.10 sorts
// before 10.0.0.9. PostgreSQL orders the values. Nothing refuses or
// documents this (enums, the one documented case, are a known difference),
// so ORDER BY, min/max and < on such columns answer differently, silently.
func TestCopybinReviewTextTypesOrder(t *testing.T) {
	t.Skip("known difference (docs/qpanalytics-types.md, \"Order and equality of the types kept as text\"): pg_lsn, inet, ranges and tid sort as their text")
	conn := rvPG(t, `DROP TABLE IF EXISTS zzord`,
		`CREATE TABLE zzord (id int, lsn pg_lsn, ip inet, r int4range, ti tid)`,
		`INSERT INTO zzord VALUES (1, '9/FFFFFFFF', '10.0.0.9', '[9,10)', '(9,1)'), (2, '10/0', '10.0.0.10', '[10,20)', '(10,1)')`)
	db := rvDuck(t)
	if err := rvCopy(t, conn, db, "zzord", "zzord"); err != nil {
		t.Fatal(err)
	}
	rvCompare(t, conn, db, "order of text-stored types", [][2]string{
		{"SELECT max(lsn)::text FROM zzord", "SELECT max(lsn) FROM zzord"},
		{"SELECT string_agg(id::text, ',' ORDER BY ip) FROM zzord", "SELECT string_agg(id::VARCHAR, ',' ORDER BY ip) FROM zzord"},
		{"SELECT string_agg(id::text, ',' ORDER BY r) FROM zzord", "SELECT string_agg(id::VARCHAR, ',' ORDER BY r) FROM zzord"},
		{"SELECT string_agg(id::text, ',' ORDER BY ti) FROM zzord", "SELECT string_agg(id::VARCHAR, ',' ORDER BY ti) FROM zzord"},
	})
}

// TestCopybinReviewJsonbNumrangeEquality: jsonb and numrange values that
// PostgreSQL holds equal ('1.0'::jsonb = '1', '{"a":1.50}' = '{"a":1.5}',
// numrange '[1.0,2)' = '[1,2)') keep their own text, which DuckDB compares
// byte by byte: DISTINCT, GROUP BY and joins on such columns split equal
// values, silently.
func TestCopybinReviewJsonbNumrangeEquality(t *testing.T) {
	t.Skip("known difference (docs/qpanalytics-types.md, \"Order and equality of the types kept as text\"): jsonb and numrange compare as their text")
	conn := rvPG(t, `DROP TABLE IF EXISTS zzeq`,
		`CREATE TABLE zzeq (id int, jb jsonb, nr numrange)`,
		`INSERT INTO zzeq VALUES (1, '1.0', '[1.0,2)'), (2, '1', '[1,2)'), (3, '{"a": 1.50}', '[1,2.00)'), (4, '{"a": 1.5}', NULL)`)
	db := rvDuck(t)
	if err := rvCopy(t, conn, db, "zzeq", "zzeq"); err != nil {
		t.Fatal(err)
	}
	rvCompare(t, conn, db, "equality of jsonb/numrange", [][2]string{
		{"SELECT count(DISTINCT jb)::text FROM zzeq", "SELECT count(DISTINCT jb) FROM zzeq"},
		{"SELECT count(*)::text FROM zzeq a JOIN zzeq b ON a.jb = b.jb", "SELECT count(*) FROM zzeq a JOIN zzeq b ON a.jb = b.jb"},
		{"SELECT count(DISTINCT nr)::text FROM zzeq", "SELECT count(DISTINCT nr) FROM zzeq"},
	})
}

// TestCopybinReviewIntervalOrder: docs/qpanalytics-types.md says "DuckDB
// compares intervals after normalising them (30 days = 1 month), as
// PostgreSQL does". It does not for intervals whose parts have different
// signs, which PostgreSQL's own arithmetic makes ('1 day' - '2 hours' is
// '1 day -02:00:00'): PostgreSQL compares the whole span (22 hours < 23
// hours), DuckDB carries only whole days out of the microseconds and then
// compares months, days, microseconds in turn, so '1 day -02:00:00' sorts
// after '23:00:00' and '1 mon -1 days' after '29 days 01:00:00'.
func TestCopybinReviewIntervalOrder(t *testing.T) {
	t.Skip("known difference (docs/qpanalytics-types.md, interval): DuckDB compares intervals of mixed signs part by part")
	conn := rvPG(t, `DROP TABLE IF EXISTS zziv`,
		`CREATE TABLE zziv (id int, iv interval)`,
		`INSERT INTO zziv VALUES (1, interval '1 day' - interval '2 hours'), (2, '23 hours'), (3, '1 mon -1 day'), (4, '29 days 1 hour')`)
	db := rvDuck(t)
	if err := rvCopy(t, conn, db, "zziv", "zziv"); err != nil {
		t.Fatal(err)
	}
	rvCompare(t, conn, db, "interval order", [][2]string{
		{"SELECT string_agg(id::text, ',' ORDER BY iv, id) FROM zziv", "SELECT string_agg(id::VARCHAR, ',' ORDER BY iv, id) FROM zziv"},
		{"SELECT max(iv)::text FROM zziv WHERE id IN (1, 2)", "SELECT max(iv)::VARCHAR FROM zziv WHERE id IN (1, 2)"},
		{"SELECT string_agg(a.id || '<' || b.id, ',' ORDER BY a.id, b.id) FROM zziv a, zziv b WHERE a.iv < b.iv", "SELECT string_agg(a.id || '<' || b.id, ',' ORDER BY a.id, b.id) FROM zziv a, zziv b WHERE a.iv < b.iv"},
	})
}

// TestCopybinReviewDataAfterTrailer: the decoder stops at the trailer (-1
// field count) and answers io.EOF without looking further, so bytes after
// it (here a second COPY stream: two more rows) are dropped without an
// error. PostgreSQL's own COPY FROM reads one byte more and fails with
// "received copy data after EOF marker" (copyfromparse.c); a malformed
// stream must give an error, not lose rows.
func TestCopybinReviewDataAfterTrailer(t *testing.T) {
	conn := rvPG(t)
	var buf bytes.Buffer
	first := 0
	for range 2 {
		if first == 0 && buf.Len() > 0 {
			first = buf.Len()
		}
		if _, err := conn.PgConn().CopyTo(context.Background(), &buf, "COPY (SELECT g::int4 FROM generate_series(1, 2) g) TO STDOUT (FORMAT binary)"); err != nil {
			t.Fatal(err)
		}
	}
	extra := buf.Len() - first
	cols := []copybin.Column{{Name: "g", TypeOID: 23, TypMod: -1}}
	dec, err := copybin.NewDecoder(&buf, cols)
	if err != nil {
		t.Fatal(err)
	}
	var b copybin.Batch
	for {
		_, err := dec.Next(&b, 0)
		if err == io.EOF {
			t.Fatalf("stream with %d bytes after its trailer decoded as %d rows and io.EOF; want an error (PostgreSQL: received copy data after EOF marker)", extra, dec.Rows())
		}
		if err != nil {
			return // an error: right
		}
	}
}
