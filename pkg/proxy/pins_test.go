package proxy

import "testing"

func TestPins(t *testing.T) {
	for sql, want := range map[string]bool{
		"LISTEN chan":                                      true,
		"select pg_advisory_lock(1)":                       true,
		"SELECT PG_TRY_ADVISORY_LOCK(1)":                   true,
		"DECLARE c CURSOR WITH HOLD FOR SELECT 1":          true,
		"create temp table t (a int)":                      true,
		"CREATE GLOBAL TEMPORARY TABLE t (a int)":          true,
		"select * into temporary t from x":                 true,
		"  PREPARE p AS SELECT 1":                          true,
		"/* app */ PREPARE p AS SELECT 1":                  true,
		"SELECT 1; prepare zz$q AS select 2":               true,
		`PREPARE "a""b" (int) AS SELECT $1`:                true,
		"PREPARE TRANSACTION 'x'":                          false,
		"WITH prepare AS (SELECT 1) SELECT * FROM prepare": false,
		"SELECT 'x; prepare p as select 1'":                true, // text matching: harmless

		"CREATE OR REPLACE TEMP VIEW v AS SELECT 1":            true,
		"DO $$ BEGIN EXECUTE 'PREPARE q AS SELECT 1'; END $$":  true,
		"SELECT a FROM t WHERE prepare IN (1, 2)":              false,
		"create table pg_temp.t (a int)":                       true,
		"CREATE FUNCTION PG_TEMP.f() RETURNS int AS 'x'":       true,
		"select * from pg_temp_3 . t":                          true,
		"select * from my_pg_temp.t":                           false,
		"SELECT abalance FROM pgbench_accounts WHERE aid = $1": false,
		"select listener from t":                               false,
		"select 1 -- temp":                                     false,
		"SELECT holdings FROM t":                               false,
		"":                                                     false,
	} {
		if got := pins(sql, false); got != want {
			t.Errorf("pins(%q) = %v, want %v", sql, got, want)
		}
	}
}

func BenchmarkPinsPgbench(b *testing.B) {
	const sql = "SELECT abalance FROM pgbench_accounts WHERE aid = $1;"
	for i := 0; i < b.N; i++ {
		if pins(sql, false) {
			b.Fatal("pins")
		}
	}
}
