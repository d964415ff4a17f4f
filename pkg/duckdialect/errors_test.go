package duckdialect

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestErrorsStayErrors runs queries PostgreSQL rejects at run time; the
// translation must fail in DuckDB too instead of returning an answer.
func TestErrorsStayErrors(t *testing.T) {
	pg, duck := smallEngines(t)
	ctx := context.Background()
	for _, q := range []string{
		"select 1/0",
		"select i / (i - i) from t",
		"select 5 % 0",
		"select 1.5 / 0",
		"select sum(n) / sum(0) from t",
		"select substring('abc' from 1 for -1)",
		"select substring(s from 1 for i) from t",
		"select round(f, 1) from t",
		"select 2147483647::int + 1",
		"select (select i from t)",
		"select power(0, -1)",
		"select power(-8, 0.5)",
		"select exp(1000)",
		"select split_part('a,b', ',', 0)",
		"select sqrt(-1)",
		"select ln(0)",
		"select asin(2)",
		"select to_date('2020-13-01', 'YYYY-MM-DD')",
	} {
		t.Run(q, func(t *testing.T) {
			if _, err := pgQuery(ctx, pg, q); err == nil {
				t.Fatalf("postgres accepted %s; the case proves nothing", q)
			}
			tr, err := Translate(q)
			if err != nil {
				t.Fatalf("translate: %v", err)
			}
			if res, err := duckQuery(ctx, duck, tr); err == nil {
				t.Errorf("duckdb answered %q where postgres fails\ntranslated: %s", res.rows, tr)
			}
		})
	}
}

// TestUnsafeTextRefused checks that text conversions DuckDB writes
// differently (floating-point, interval) fail at run time rather than
// answer differently from PostgreSQL.
func TestUnsafeTextRefused(t *testing.T) {
	_, duck := smallEngines(t)
	ctx := context.Background()
	for _, q := range []string{
		"select f::text from t",
		"select 'x' || f from t",
		"select concat('x', f) from t",
		"select (d - ts)::text from t",
	} {
		tr, err := Translate(q)
		if err != nil {
			t.Errorf("%s: translate: %v", q, err)
			continue
		}
		if _, err := duckQuery(ctx, duck, tr); err == nil || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("%s: duckdb error = %v, want the not-supported error\ntranslated: %s", q, err, tr)
		}
	}
}

// TestRefusals checks that statements and constructs without a faithful
// translation return *UnsupportedError naming them.
func TestRefusals(t *testing.T) {
	for q, feature := range map[string]string{
		"insert into t values (1)":                              "InsertStmt",
		"update t set i = 1":                                    "UpdateStmt",
		"delete from t":                                         "DeleteStmt",
		"create table x (i int)":                                "CreateStmt",
		"copy t to stdout":                                      "CopyStmt",
		"set work_mem = '1MB'":                                  "VariableSetStmt",
		"show work_mem":                                         "VariableShowStmt",
		"select 1; select 2":                                    "2 statements",
		"select pg_sleep(1)":                                    "function pg_sleep",
		"select 'a' similar to 'a'":                             "SIMILAR TO",
		"select * from only t":                                  "ONLY",
		"select 1.5::numeric(50,2)":                             "numeric(50,2)",
		"select i::numeric from t":                              "numeric without precision",
		"select 'a'::char(3)":                                   "type bpchar",
		"select interval '1 day 3 hours' day":                   "interval literal",
		"select interval '1 fortnight'":                         "interval literal",
		"select array[1,2]":                                     "AArrayExpr",
		"select * from t for update":                            "FOR UPDATE",
		"select generate_series(1, 3)":                          "function generate_series",
		"select * from generate_series(1, 3)":                   "RangeFunction",
		"select s collate \"C\" from t":                         "CollateClause",
		"select 1 as a into t2":                                 "SELECT INTO",
		"select extract(timezone from now())":                   "extract field timezone",
		"select substring('abc' from 'b')":                      "regular expression",
		"explain (format json) select 1":                        "EXPLAIN options",
		"select i = any(array[1]) from t":                       "ANY/ALL over arrays",
		"select 1e400":                                          "numeric literal",
		"select x'1f'":                                          "bit-string",
		"select myschema.f(1)":                                  "function myschema.f",
		"select 1 # 2":                                          "operator #",
		"with d as (delete from t returning *) select * from d": "data-modifying",
		"select '2020-01-01'::timestamp(0)":                     "precision",
		"select (1, 2) in (select 1, 2)":                        "row constructors",
		"select 1 from t group by distinct i":                   "GROUP BY DISTINCT",
		"select 1 from t where c = 'x  '":                       "ends in spaces",
		"select 1 from t where c in ('a', 'x ')":                "ends in spaces",
		"select relname from pg_class":                          "system catalog pg_class",
		"select * from information_schema.tables":               "system catalog tables",
		"select regexp_replace('a', 'a', 'b', 'n')":             "flags",
		"select ~ 5":                                            "prefix operator ~",
		"select i from t order by i using <":                    "USING",
	} {
		_, err := Translate(q)
		var ue *UnsupportedError
		if !errors.As(err, &ue) {
			t.Errorf("%s: error %v, want *UnsupportedError", q, err)
			continue
		}
		if !strings.Contains(ue.Error(), feature) {
			t.Errorf("%s: %q does not name %q", q, ue.Error(), feature)
		}
		if ue.SQLState() != "0A000" {
			t.Errorf("%s: SQLSTATE %s", q, ue.SQLState())
		}
	}
}

func TestSyntaxError(t *testing.T) {
	_, err := Translate("selec 1")
	var se *SyntaxError
	if !errors.As(err, &se) || se.SQLState() != "42601" || se.Position != 1 {
		t.Fatalf("got %#v, want *SyntaxError at 1", err)
	}
}

func TestIsQuery(t *testing.T) {
	for q, want := range map[string]bool{
		"select 1":                             true,
		"SELECT * FROM t WHERE i > 1":          true,
		"values (1)":                           true,
		"with x as (select 1) select * from x": true,
		"table t":                              true,
		"show work_mem":                        true,
		"explain select 1":                     true,
		"explain analyze select 1":             true,
		"select 1 union select 2":              true,
		"insert into t values (1)":             false,
		"update t set i = 1":                   false,
		"delete from t":                        false,
		"create table x (i int)":               false,
		"drop table t":                         false,
		"copy t to stdout":                     false,
		"set work_mem = '1MB'":                 false,
		"begin":                                false,
		"select 1 into t2":                     false,
		"select * from t for update":           false,
		"with d as (delete from t returning *) select * from d": false,
		"explain insert into t values (1)":                      false,
		"select 1; select 2":                                    false,
		"":                                                      false,
	} {
		got, err := IsQuery(q)
		if err != nil {
			t.Errorf("%q: %v", q, err)
			continue
		}
		if got != want {
			t.Errorf("IsQuery(%q) = %v, want %v", q, got, want)
		}
	}
	if _, err := IsQuery("selec 1"); err == nil {
		t.Error("IsQuery accepted a syntax error")
	}
}

// TestRewrites pins the DuckDB text of each rewrite.
func TestRewrites(t *testing.T) {
	checkTranslations(t, map[string]string{
		"select a from t where d <= date '1998-12-01' - interval '90' day": "SELECT a FROM t WHERE d <= ('1998-12-01'::date - '0 months 90 days 0 microseconds'::\"interval\")",
		"select a from t where x ~ 'b' and y !~* 'c'":                      "SELECT a FROM t WHERE regexp_matches(x, 'b', 's') AND NOT regexp_matches(y, 'c', 'is')",
		"select a from t where x like 'a\\_%' and y like 'b%'":             "SELECT a FROM t WHERE like_escape(x, E'a\\\\_%', E'\\\\') AND y LIKE 'b%'",
		"select a / b, a / 2 from t":                                       "SELECT a / CASE WHEN b = 0 AND a IS NOT NULL THEN error('division by zero') ELSE b END AS \"?column?\", a / 2 AS \"?column?\" FROM t",
		"select substring(a from 1 for 2) from t":                          "SELECT \"substring\"(a, 1, 2) AS \"substring\" FROM t",
		"select extract(year from d) from t":                               "SELECT date_part('year', d)::\"decimal\"(18, 0) AS \"extract\" FROM t",
		"select count(*) filter (where a > 1) from t":                      "SELECT count(*) FILTER (WHERE a > 1) AS count FROM t",
		"select 1e3, 12::numeric, 2.5::numeric(10,1)":                      "SELECT (1000)::\"decimal\"(4, 0) AS \"?column?\", 12::\"decimal\"(38, 0) AS \"numeric\", (2.5)::\"decimal\"(10, 1) AS \"numeric\"",
		"values (1)":                   "SELECT * FROM (VALUES (1)) \"*VALUES*\"(column1)",
		"explain select 1":             "EXPLAIN SELECT 1 AS \"?column?\"",
		"explain analyze select 1":     "EXPLAIN ANALYZE SELECT 1 AS \"?column?\"",
		"select a from t where b = $1": "SELECT a FROM t WHERE b = $1",
	})
}

// checkTranslations requires Translate to turn each key into its value.
func checkTranslations(t *testing.T, cases map[string]string) {
	t.Helper()
	for q, want := range cases {
		got, err := Translate(q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", q, got, want)
		}
	}
}

// TestCompareDetects proves the parity comparison can fail: the same
// query run in DuckDB untranslated differs from PostgreSQL.
func TestCompareDetects(t *testing.T) {
	pg, duck := smallEngines(t)
	ctx := context.Background()
	q := "select 'abc' ~ 'b' as m, substring('abcdef' from -1 for 3) as s"
	want, err := pgQuery(ctx, pg, q)
	if err != nil {
		t.Fatal(err)
	}
	got, err := duckQuery(ctx, duck, q)
	if err != nil {
		t.Fatal(err)
	}
	if sameResult(want, got) == nil {
		t.Fatal("untranslated answers compared equal")
	}
	if compareResults(want, got, nil) == nil {
		t.Fatal("untranslated answers compared equal under the TPC-H rule")
	}
}

// TestCacheKeepsResults checks that a cached translation and a cached
// refusal come back unchanged.
func TestCacheKeepsResults(t *testing.T) {
	for i := 0; i < 2; i++ {
		out, err := Translate("select 7/2 as q")
		if err != nil || out != `SELECT 7 / 2 AS q` {
			t.Fatalf("round %d: %q, %v", i, out, err)
		}
		var ue *UnsupportedError
		if _, err := Translate("select pg_sleep(1)"); !errors.As(err, &ue) {
			t.Fatalf("round %d: refusal lost: %v", i, err)
		}
	}
}
