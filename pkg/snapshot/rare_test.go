package snapshot

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/copybin"
	"github.com/qpkit/qpkit/pkg/copybin/copybintest"
)

// oddDefaults makes the source database's own settings differ from
// copybin.TextSettings, so the test shows the snapshot does not depend on
// them: another time zone, another DateStyle, 15-digit floats.
const oddDefaults = `
DO $$ BEGIN
  EXECUTE format('ALTER DATABASE %I SET TimeZone = %L', current_database(), 'Asia/Kolkata');
  EXECUTE format('ALTER DATABASE %I SET DateStyle = %L', current_database(), 'SQL, DMY');
  EXECUTE format('ALTER DATABASE %I SET extra_float_digits = 0', current_database());
END $$;`

// rareCanon gives, per column, a PostgreSQL and a DuckDB expression that
// print the same text when the copy holds the value exactly: the output
// text itself for the columns copied as VARCHAR (and for integers), the
// decimal for money and numeric domains, "<local µs> <offset>" for timetz.
func rareCanon(c copybin.Column) (pg, duck string) {
	q := copybin.QuoteIdent(c.Name)
	kind, elem, _ := c.Kind()
	pgOut := func(x string) string { return "CASE WHEN " + x + " IS NOT NULL THEN format('%s', " + x + ") END" }
	timetzPG := func(x string) string {
		return "(extract(epoch from " + x + "::time) * 1000000)::bigint::text || ' ' || extract(timezone from " + x + ")::int::text"
	}
	timetzDuck := func(x string) string {
		return "CAST(date_diff('microsecond', TIME '00:00:00', CAST(" + x + " AS TIME)) AS VARCHAR) || ' ' || CAST(date_part('timezone', " + x + ") AS VARCHAR)"
	}
	pgList := func(e string) string {
		return "CASE WHEN " + q + " IS NOT NULL THEN array_to_string(array(SELECT coalesce(" + e + ", 'NULL') FROM unnest(" + q + ") WITH ORDINALITY u(x, o) ORDER BY o), chr(31)) END"
	}
	duckList := func(e string) string {
		return "array_to_string(list_transform(" + q + ", x -> coalesce(" + e + ", 'NULL')), chr(31))"
	}
	switch {
	case kind == copybin.KindList && elem == copybin.KindDecimal:
		return pgList("x::numeric::text"), duckList("CAST(x AS VARCHAR)")
	case kind == copybin.KindList && elem == copybin.KindTimeTZ:
		return pgList(timetzPG("x")), duckList(timetzDuck("x"))
	case kind == copybin.KindList:
		return pgList(pgOut("x")), duckList("CAST(x AS VARCHAR)")
	case kind == copybin.KindDecimal:
		return q + "::numeric::text", "CAST(" + q + " AS VARCHAR)"
	case kind == copybin.KindTimeTZ:
		return timetzPG(q), timetzDuck(q)
	}
	return pgOut(q), "CAST(" + q + " AS VARCHAR)"
}

// TestRunRareTypes copies a table with a column of every type off the
// decoder's hand path with both strategies, checks the DuckDB types,
// compares every value with PostgreSQL's text of it, and verifies.
func TestRunRareTypes(t *testing.T) {
	ctx := context.Background()
	url := newSource(t, copybintest.RareSQL+oddDefaults)
	pgc, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pgc.Close(ctx)
	mustExecPG(t, pgc, copybin.TextSettings)
	cols, err := copybin.LookupColumns(ctx, pgc, "public.rare")
	if err != nil {
		t.Fatal(err)
	}
	var pgExprs, duckExprs []string
	for _, c := range cols {
		p, d := rareCanon(c)
		pgExprs = append(pgExprs, p)
		duckExprs = append(duckExprs, d)
	}
	pgr, err := pgc.Query(ctx, "SELECT "+strings.Join(pgExprs, ", ")+" FROM rare ORDER BY rare.id")
	if err != nil {
		t.Fatal(err)
	}
	want := readStrings(t, pgr, len(cols))
	pgr.Close()
	wantTypes := map[string]string{"ip": "VARCHAR", "net": "VARCHAR", "pt": "VARCHAR", "tzr": "VARCHAR", "tq": "VARCHAR",
		"mo": "DECIMAL(19,2)", "x8": "UBIGINT", "xi": "BIGINT", "tt": "TIME WITH TIME ZONE", "xm": "VARCHAR",
		"en": "VARCHAR", "dom": "DECIMAL(10,2)", "dnet": "VARCHAR", "dmood": "VARCHAR",
		"aip": "VARCHAR[]", "amo": "DECIMAL(19,2)[]", "ax8": "UBIGINT[]", "att": "TIME WITH TIME ZONE[]",
		"aen": "VARCHAR[]", "adom": "DECIMAL(10,2)[]", "anet": "VARCHAR[]"}

	for _, strategy := range []Strategy{Appender, Parquet} {
		t.Run(string(strategy), func(t *testing.T) {
			tgt := filepath.Join(t.TempDir(), "copy.duckdb")
			start := time.Now()
			res, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: []string{"rare"}, Strategy: strategy,
				ScratchDir: t.TempDir(), Readers: 2, Writers: 1, RangePages: 20, BatchRows: 700, Verify: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d rows in %v", strategy, res.Tables[0].Rows, time.Since(start))
			if len(res.Checks) != 1 || !res.Checks[0].Match {
				t.Fatalf("checks %+v", res.Checks)
			}
			db := openCopy(t, tgt)
			types := map[string]string{}
			rows, err := db.Query(`SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' AND table_name = 'rare'`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var n, typ string
				if err := rows.Scan(&n, &typ); err != nil {
					t.Fatal(err)
				}
				types[n] = typ
			}
			rows.Close()
			for n, w := range wantTypes {
				if types[n] != w {
					t.Errorf("column %s is %s in DuckDB, want %s", n, types[n], w)
				}
			}
			dr, err := db.Query("SELECT " + strings.Join(duckExprs, ", ") + " FROM public.rare ORDER BY id")
			if err != nil {
				t.Fatal(err)
			}
			got := readStrings(t, dr, len(cols))
			dr.Close()
			if len(got) != len(want) {
				t.Fatalf("copy has %d rows, source %d", len(got), len(want))
			}
			bad := 0
			for i := range want {
				for c := range cols {
					if want[i][c] != got[i][c] {
						if bad++; bad <= 20 {
							t.Errorf("id %s column %s (%s): copy %s, source %s", want[i][0], cols[c].Name, cols[c].Type, got[i][c], want[i][c])
						}
					}
				}
			}
			checks, err := Verify(ctx, VerifyOptions{SourceURL: url, DB: db})
			if err != nil {
				t.Fatal(err)
			}
			if len(checks) != 1 || !checks[0].Match {
				t.Errorf("standalone verify: %+v", checks)
			}
		})
	}
}

// scanner is what pgx.Rows and *sql.Rows share for reading a row.
type scanner interface {
	Next() bool
	Scan(...any) error
	Err() error
}

// readStrings reads n columns of every row as strings, "NULL" for NULL.
func readStrings(t *testing.T, rows scanner, n int) [][]string {
	t.Helper()
	var out [][]string
	for rows.Next() {
		vals := make([]*string, n)
		ptrs := make([]any, n)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, n)
		for i, v := range vals {
			row[i] = "NULL"
			if v != nil {
				row[i] = *v
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
