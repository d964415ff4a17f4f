package tpchload

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/tpch"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestLoadSameData loads SF 0.01 into PostgreSQL and DuckDB and checks that
// every table has the specification's row count in both and the same
// per-column fingerprint (sums, extremes, lengths after trimming).
func TestLoadSameData(t *testing.T) {
	ctx := context.Background()
	const sf = 0.01
	pg := pgtest.Shared(t)
	if err := LoadPostgres(ctx, pg.URL(), sf, true); err != nil {
		t.Fatal(err)
	}
	duck, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer duck.Close()
	if err := LoadDuckDB(ctx, duck, sf); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	var pkeys int
	if err := conn.QueryRow(ctx, "select count(*) from pg_constraint where contype = 'p' and connamespace = 'public'::regnamespace").Scan(&pkeys); err != nil || pkeys != 8 {
		t.Errorf("postgres primary keys = %d (%v), want 8", pkeys, err)
	}
	cols, err := schemaColumns()
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tpch.Tables {
		want, err := tpch.RowCount(tb, sf)
		if err != nil {
			t.Fatal(err)
		}
		q := "select count(*)"
		for _, c := range cols[tb.String()] {
			switch c.duck {
			case "VARCHAR":
				// Lengths after trimming: DuckDB must hold no trailing spaces.
				q += fmt.Sprintf(", sum(length(rtrim(%[1]s)))::bigint, min(%[1]s)::varchar, max(%[1]s)::varchar", c.name)
			default:
				q += fmt.Sprintf(", min(%[1]s)::varchar, max(%[1]s)::varchar", c.name)
			}
		}
		q += " from " + tb.String()
		pgRow, err := conn.Query(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", tb, err)
		}
		pgVals, err := pgx.CollectExactlyOneRow(pgRow, func(r pgx.CollectableRow) ([]any, error) { return r.Values() })
		if err != nil {
			t.Fatalf("%s: %v", tb, err)
		}
		duckVals := make([]any, len(pgVals))
		ptrs := make([]any, len(pgVals))
		for i := range ptrs {
			ptrs[i] = &duckVals[i]
		}
		if err := duck.QueryRowContext(ctx, q).Scan(ptrs...); err != nil {
			t.Fatalf("%s in duckdb: %v", tb, err)
		}
		if got := fmt.Sprint(pgVals[0]); got != fmt.Sprint(want) {
			t.Errorf("%s: postgres has %s rows, want %d", tb, got, want)
		}
		for i := range pgVals {
			p, d := normalize(pgVals[i]), normalize(duckVals[i])
			if p != d {
				t.Errorf("%s: fingerprint %d differs: postgres %q, duckdb %q", tb, i, p, d)
			}
		}
	}
	// char(n) values keep no trailing spaces in DuckDB.
	var padded int
	if err := duck.QueryRowContext(ctx, "select count(*) from customer where c_mktsegment like '% '").Scan(&padded); err != nil || padded != 0 {
		t.Errorf("duckdb padded c_mktsegment values = %d (%v), want 0", padded, err)
	}
}

// normalize prints a fingerprint value; PostgreSQL's char(n) min/max keep
// their padding, which the copy strips.
func normalize(v any) string {
	s := fmt.Sprint(v)
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}
