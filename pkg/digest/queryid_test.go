// Our shapes next to pg_stat_statements' queryid on a real PostgreSQL: the
// package doc's "Relation to pg_stat_statements' queryid", checked pair by
// pair on both sides.

package digest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

// queryIDCase is two statements and whether each side gives them one
// entry: our shape (sameShape) and pg_stat_statements' queryid (sameID).
type queryIDCase struct {
	name              string
	a, b              string
	sameShape, sameID bool
}

var queryIDCases = []queryIDCase{
	// Where the two agree.
	{"integer constants", "select a from t where a = 1", "SELECT a FROM t WHERE a = 42", true, true},
	{"negative constant", "select a from t where a = -1", "select a from t where a = 5", true, true},
	{"string constants", "select a from t where b = 'x'", "select a from t where b = 'yy'", true, true},
	{"comments and spacing", "select a from t where a = 1 -- note", "select  a\nfrom t /* x */ where a=2", true, true},
	{"!= is <>", "select a from t where a != 1", "select a from t where a <> 2", true, true},
	{"limit", "select a from t limit 5", "select a from t limit 10", true, true},
	{"binary minus keeps the operator", "select a from t where a - 1 > 0", "select a from t where a - 2 > 3", true, true},
	{"order by position", "select a, b from t order by 1", "select a, b from t order by 2", false, false},
	{"boolean constants", "select a from t where c = true", "select a from t where c = false", true, true},
	{"null and a string", "select coalesce(b, null) from t", "select coalesce(b, 'x') from t", true, true},
	{"is null and is not null", "select a from t where b is null", "select a from t where b is not null", false, false},
	{"is true and is false", "select a from t where c is true", "select a from t where c is false", false, false},
	{"is not true and is not false", "select a from t where c is not true", "select a from t where c is not false", false, false},
	{"not of a boolean constant", "select a from t where not true", "select a from t where not false", true, true},
	{"typed literal", "select a from t where e = date '2020-01-01'", "select a from t where e = date '2021-02-03'", true, true},
	{"cast constant", "select a from t where b = 'x'::text", "select a from t where b = 'y'::text", true, true},

	// Where ours merges what queryid splits (documented).
	{"IN list lengths", "select a from t where a in (1, 2)", "select a from t where a in (1, 2, 3)", true, false},
	{"constant types", "select a from t where a = 1", "select a from t where a = 1.5", true, false},
	{"VALUES row counts", "insert into t (a) values (1)", "insert into t (a) values (1), (2)", true, false},

	// Where ours splits what queryid merges (documented).
	{"schema-qualified name", "select a from t", "select a from public.t", false, true},
	{"qualified column", "select a from t", "select t.a from t", false, true},
	{"IN of one and =", "select a from t where a in (1)", "select a from t where a = 1", false, true},
	{"cast spellings", "select cast(b as int) from t", "select b::int from t", false, true},
}

func TestShapesAgainstQueryID(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster")
	}
	db := pgtest.Start(t, pgtest.Options{Settings: map[string]string{
		"shared_preload_libraries":         "pg_stat_statements",
		"pg_stat_statements.track_utility": "off",
	}})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, sql := range []string{
		"create extension pg_stat_statements",
		"create table t (a int, b text, c bool, e date)",
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	// queryID runs sql alone with the simple protocol, as a client's
	// text would arrive, and reads the entry it made.
	queryID := func(sql string) int64 {
		t.Helper()
		if _, err := conn.Exec(ctx, "select pg_stat_statements_reset()"); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.PgConn().Exec(ctx, sql).ReadAll(); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		var ids []int64
		rows, err := conn.Query(ctx, "select queryid from pg_stat_statements where query not like '%pg_stat_statements%'")
		if err == nil {
			ids, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		}
		if err != nil || len(ids) != 1 {
			t.Fatalf("%s: pg_stat_statements has %v (%v), want one entry", sql, ids, err)
		}
		return ids[0]
	}
	for _, c := range queryIDCases {
		na, _ := Normalize(c.a)
		nb, _ := Normalize(c.b)
		if got := na == nb; got != c.sameShape {
			t.Errorf("%s: one shape is %v, want %v (%q, %q)", c.name, got, c.sameShape, na, nb)
		}
		if got := queryID(c.a) == queryID(c.b); got != c.sameID {
			t.Errorf("%s: one queryid on PostgreSQL is %v, the package doc says %v (%q, %q)", c.name, got, c.sameID, c.a, c.b)
		}
	}
}
