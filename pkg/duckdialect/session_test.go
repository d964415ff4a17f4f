package duckdialect

import (
	"context"
	"database/sql"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
)

// TestSessionSettingsMatter shows that each SessionSQL setting is needed:
// without it, DuckDB answers these translated queries unlike PostgreSQL,
// and with it, like PostgreSQL.
func TestSessionSettingsMatter(t *testing.T) {
	pg, _ := smallEngines(t)
	ctx := context.Background()
	var tz string
	if err := pg.QueryRow(ctx, "show timezone").Scan(&tz); err != nil {
		t.Fatal(err)
	}
	if tz != "UTC" && tz != "Etc/UTC" {
		t.Skipf("the cluster's TimeZone is %s; this test assumes UTC", tz)
	}
	cases := []struct{ setting, query string }{
		{"SET integer_division = true", "select 7/2 as q, -7/2 as r"},
		{"SET default_null_order = 'nulls_last_on_asc_first_on_desc'", "select x from (values (1), (null), (2)) v(x) order by x desc"},
		{"SET TimeZone = 'UTC'", "select '2020-01-01 20:30:00+00'::timestamptz::date as d"},
	}
	for _, c := range cases {
		want, err := pgQuery(ctx, pg, c.query)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := Translate(c.query)
		if err != nil {
			t.Fatal(err)
		}
		bare, err := sql.Open("duckdb", "")
		if err != nil {
			t.Fatal(err)
		}
		bare.SetMaxOpenConns(1)
		// A zone far from UTC, so that a missing TimeZone setting shows.
		if _, err := bare.Exec("SET TimeZone = 'Asia/Tokyo'"); err != nil {
			t.Fatal(err)
		}
		for _, s := range SessionSQL() {
			if s == c.setting {
				continue
			}
			if _, err := bare.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		without, err := duckQuery(ctx, bare, tr)
		if err != nil {
			t.Fatal(err)
		}
		if sameResult(want, without) == nil {
			t.Errorf("without %q DuckDB already answers %s like PostgreSQL; the setting is not shown to matter", c.setting, c.query)
		}
		if _, err := bare.Exec(c.setting); err != nil {
			t.Fatal(err)
		}
		with, err := duckQuery(ctx, bare, tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := sameResult(want, with); err != nil {
			t.Errorf("with %q: %v", c.setting, err)
		}
		bare.Close()
	}
}
