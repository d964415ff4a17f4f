// Review of 7371c8d/1860451: safesql.CheckNesting in front of libpg_query
// (split, catalogOnly, duckdialect.parse) with 500 brackets / 8000
// operators.

package duckwire

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

// rvInDates is "select count(*) from lineitem where l_shipdate in
// ('1995-01-01'::date, ...)" with n dates: what psycopg2 sends for
// "... in %s" with a tuple of datetime.date (it renders each one as
// '...'::date), uuid and bytea likewise ('...'::uuid, '...'::bytea).
func rvInDates(n int) string {
	var b strings.Builder
	b.WriteString("select count(*) from lineitem where l_shipdate in (")
	d := time.Date(1995, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "'%s'::date", d.AddDate(0, 0, i).Format("2006-01-02"))
	}
	b.WriteString(")")
	return b.String()
}

// An IN list is one flat list in the parse tree (no nesting at all), and
// so is a VALUES list of negative numbers; PostgreSQL 15 runs both at
// any length. CheckNesting counts every operator token of the whole text
// ('::' of each element, the '-' of each negative number) as if they
// chained: a filter of 8,001 dates (176 KB, well under the 1 MiB message
// limit) is refused with 54001 "statement is too complex", as is a
// VALUES list of 8,001 (lat, lon) pairs with negative longitudes.
func TestToday5ReviewFlatListsNotTooComplex(t *testing.T) {
	s := startServer(t, nil)
	pg := connect(t, pgtest.Shared(t).URL(), true)
	qa := connect(t, s.url, true)
	var vals strings.Builder
	vals.WriteString("select count(*), min(lon) from (values ")
	for i := range 8001 {
		if i > 0 {
			vals.WriteString(", ")
		}
		fmt.Fprintf(&vals, "(%d.5, -%d.25)", i%90, i%180)
	}
	vals.WriteString(") v(lat, lon)")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pg.Exec(ctx, "create temp table lineitem (l_shipdate date)")
	for _, c := range []struct{ name, sql string }{
		{"IN list of 8,001 '...'::date", rvInDates(8001)},
		{"VALUES list of 8,001 rows with a negative number each", vals.String()},
	} {
		var n int64
		if err := pg.QueryRow(ctx, c.sql).Scan(&n, new(any)); err != nil && !strings.Contains(err.Error(), "number of field") {
			if err2 := pg.QueryRow(ctx, c.sql).Scan(&n); err2 != nil {
				t.Fatalf("%s: PostgreSQL: %v / %v", c.name, err, err2)
			}
		}
		rows, err := qa.Query(ctx, c.sql)
		if err == nil {
			for rows.Next() {
			}
			rows.Close()
			err = rows.Err()
		}
		if err != nil {
			t.Errorf("%s (%d bytes, a flat list PostgreSQL runs): qpanalytics refused it: %v", c.name, len(c.sql), err)
		}
	}
}
