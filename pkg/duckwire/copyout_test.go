package duckwire

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

// copyTo runs a COPY ... TO STDOUT and returns what it wrote and its tag.
func copyTo(c *pgx.Conn, sql string) (string, string, error) {
	var buf bytes.Buffer
	tag, err := c.PgConn().CopyTo(context.Background(), &buf, sql)
	return buf.String(), tag.String(), err
}

// TestCopyOutMatchesPostgres: COPY (query) TO STDOUT, in text and CSV with
// their options, writes the bytes PostgreSQL 15 writes for the same values
// (every supported type; tabs, line breaks, backslashes, quotes, the
// delimiter, NULL and empty strings, "\." alone) and the same tag.
func TestCopyOutMatchesPostgres(t *testing.T) {
	pg := connect(t, pgtest.Shared(t).URL(), false)
	s := startServer(t, nil)
	duck := connect(t, s.url, false)
	for _, c := range []*pgx.Conn{pg, duck} {
		if _, err := c.Exec(context.Background(), "set timezone = 'UTC'"); err != nil {
			t.Fatal(err)
		}
	}
	const names = "i2, i4, i8, f4, f8, num, big, t, b, d, ts, tstz, iv, u, bl, j, arr, tarr"
	pgTypes := "select * from (" + pgTypesRow + ") as x(" + names + ")"
	duckTypes := "select " + names + " from types where i4 = 42"
	const strs = `select 'a' || chr(9) || 'b' || chr(10) || 'c\d' || chr(13) || chr(8) || chr(1) as s, null::text as n, '' as e,
		'x,y"z''w;v|u' as q, '\.' as dot, 'NULL' as word, ' lead' as sp`
	for _, opts := range []string{
		"", "(HEADER)", "(FORMAT csv)", "(FORMAT csv, HEADER)", "WITH CSV HEADER", "(FORMAT text, DELIMITER '|', NULL '')",
		"(FORMAT csv, DELIMITER ';', NULL 'NULL', QUOTE '''', ESCAPE '\\', HEADER true)", "(FORMAT csv, NULL '', HEADER false)",
	} {
		for _, q := range []struct{ pg, duck string }{{pgTypes, duckTypes}, {strs, strs}, {`select '\.' as dot`, `select '\.' as dot`}} {
			want, wantTag, err := copyTo(pg, "COPY ("+q.pg+") TO STDOUT "+opts)
			if err != nil {
				t.Fatalf("PostgreSQL, %s %s: %v", q.pg, opts, err)
			}
			got, tag, err := copyTo(duck, "COPY ("+q.duck+") TO STDOUT "+opts)
			if err != nil || got != want || tag != wantTag {
				t.Errorf("COPY (%.40s...) TO STDOUT %s:\n got %q %q %v\nwant %q %q", q.duck, opts, got, tag, err, want, wantTag)
			}
		}
	}
	// A table and a column list read as the SELECT they stand for.
	got, tag, err := copyTo(duck, `COPY types (i4, t) TO STDOUT (FORMAT csv)`)
	want, _, _ := copyTo(duck, `COPY (select i4, t from types) TO STDOUT (FORMAT csv)`)
	if err != nil || got != want || tag != "COPY 2" {
		t.Errorf("COPY types (i4, t): %q %q %v, want %q", got, tag, err, want)
	}
}

// TestCopyOutRefused: COPY FROM is a write, files and programs belong to
// the server, binary and other options are not offered, and the extended
// protocol does not carry COPY here; each is refused with its reason.
func TestCopyOutRefused(t *testing.T) {
	s := startServer(t, nil)
	duck := connect(t, s.url, false)
	for sql, want := range map[string]string{
		"COPY types FROM STDIN":                           "25006 cannot execute COPY FROM in a read-only transaction",
		"COPY types TO '/tmp/x.csv'":                      "0A000 COPY to a file or a program is not supported",
		"COPY types TO PROGRAM 'cat'":                     "0A000 COPY to a file or a program is not supported",
		"COPY types TO STDOUT (FORMAT binary)":            "0A000 COPY format binary is not supported",
		"COPY types TO STDOUT (FORCE_QUOTE *)":            `0A000 COPY option "force_quote" is not supported`,
		"COPY types TO STDOUT (DELIMITER '||')":           "22023 COPY delimiter must be a single one-byte character",
		"COPY types TO STDOUT (QUOTE '''')":               "0A000 COPY quote and escape are available only in CSV mode",
		"COPY types TO STDOUT (FORMAT csv, QUOTE ',')":    "22023 COPY delimiter and quote must be different",
		"COPY types TO STDOUT (HEADER maybe)":             "42601 header requires a Boolean value",
		"COPY types TO STDOUT (FORMAT yaml)":              `22023 COPY format "yaml" not recognized`,
		"COPY (select nosuchcolumn from types) TO STDOUT": "42703 ",
	} {
		_, _, err := copyTo(duck, sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || !bytes.HasPrefix([]byte(pe.Code+" "+pe.Message), []byte(want)) {
			t.Errorf("%s: %v, want %s", sql, err, want)
		}
	}
	_, err := duck.PgConn().Prepare(context.Background(), "", "COPY types TO STDOUT", nil)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "0A000" {
		t.Errorf("COPY through Parse: %v, want 0A000", err)
	}
	var n int
	if err := duck.QueryRow(context.Background(), "select count(*) from types").Scan(&n); err != nil || n != 2 {
		t.Errorf("the session after the refusals: %d %v", n, err)
	}
}
