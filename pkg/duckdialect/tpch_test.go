package duckdialect

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/tpch"
)

// TestTPCHParity runs the 22 TPC-H queries in PostgreSQL and, translated,
// in DuckDB on the same SF 0.01 data and compares the answers.
func TestTPCHParity(t *testing.T) {
	runTPCH(t, tpchEngines(t))
}

// TestTPCHParitySF01 is TestTPCHParity at SF 0.1, run when TPCH_LONG=1 (scripts/test --long)
// and not -short.
func TestTPCHParitySF01(t *testing.T) {
	if testing.Short() || os.Getenv("TPCH_LONG") != "1" {
		t.Skip("set TPCH_LONG=1 (scripts/test --long) for SF 0.1")
	}
	e, err := loadEngines(t, pgtest.Start(t, pgtest.Options{}).URL(), 0.1)
	if err != nil {
		t.Fatal(err)
	}
	defer e.pg.Close(context.Background())
	runTPCH(t, e)
}

func runTPCH(t *testing.T, e *engines) {
	ctx := context.Background()
	for n := 1; n <= tpch.NumQueries; n++ {
		t.Run("q"+strconv.Itoa(n), func(t *testing.T) {
			q, err := tpch.Query(n)
			if err != nil {
				t.Fatal(err)
			}
			duckSQL, err := Translate(q)
			if err != nil {
				t.Fatalf("translate: %v", err)
			}
			want, err := pgQuery(ctx, e.pg, q)
			if err != nil {
				t.Fatalf("postgres: %v", err)
			}
			got, err := duckQuery(ctx, e.duck, duckSQL)
			if err != nil {
				t.Fatalf("duckdb: %v\n%s", err, duckSQL)
			}
			if len(want.rows) == 0 {
				t.Fatalf("postgres returned no rows; the comparison would prove nothing")
			}
			keys, err := orderKeys(q, want.cols)
			if err != nil {
				t.Fatal(err)
			}
			if err := compareResults(want, got, keys); err != nil {
				t.Errorf("%v\ntranslated: %s", err, duckSQL)
			}
		})
	}
}

// orderKeys finds the output columns of a query's ORDER BY, which must
// name output columns (as the TPC-H queries do).
func orderKeys(q string, cols []string) ([]int, error) {
	tree, err := pg_query.Parse(q)
	if err != nil {
		return nil, err
	}
	var keys []int
	for _, s := range tree.Stmts[0].Stmt.GetSelectStmt().SortClause {
		cr := s.GetSortBy().Node.GetColumnRef()
		if cr == nil {
			return nil, fmt.Errorf("ORDER BY item is not a column name")
		}
		name := cr.Fields[len(cr.Fields)-1].GetString_().Sval
		found := false
		for i, c := range cols {
			if c == name {
				keys, found = append(keys, i), true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("ORDER BY %s is not an output column", name)
		}
	}
	return keys, nil
}
