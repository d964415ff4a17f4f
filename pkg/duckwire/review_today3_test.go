package duckwire

// Review of today's result format count check at Bind.

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// SHOW ALL has three columns (name, setting, description), in PostgreSQL
// and here (show "all"). The check moved to Bind takes every SHOW to have
// one column (prepared.columnCount: kindShow is 1), so a Bind of SHOW ALL
// with a format per column is refused with "bind message has 3 result
// formats but query has 1 columns", where PostgreSQL (and qpanalytics
// before, which checked the real columns at Execute) answers the rows.
func TestToday3ReviewShowAllThreeResultFormats(t *testing.T) {
	p := dialBoth(t, nil)
	for name, c := range map[string]*rawClient{"PostgreSQL": p.pg, "qpanalytics": p.qp} {
		c.send(&pgproto3.Parse{Query: "show all"}, &pgproto3.Bind{ResultFormatCodes: []int16{0, 0, 0}},
			&pgproto3.Execute{}, &pgproto3.Sync{})
		msgs := c.until('Z')
		rows := 0
		for _, m := range msgs {
			switch m := m.(type) {
			case *pgproto3.ErrorResponse:
				t.Errorf("%s: SHOW ALL bound with 3 result formats (one per column): %s %q", name, m.Code, m.Message)
			case *pgproto3.DataRow:
				rows++
				if len(m.Values) != 3 {
					t.Fatalf("%s: a row of %d columns", name, len(m.Values))
				}
			}
		}
		if rows == 0 {
			t.Errorf("%s: no rows (%s)", name, summary(msgs))
		}
	}
}
