package duckwire

// Tests of limitations once documented as known, fixed since.

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// PostgreSQL refuses a result format count that is neither 0, 1 nor the
// number of columns at Bind (08P01), not at Execute: the Bind gets no
// BindComplete. A SHOW has one column.
func TestKnownReviewResultFormatCountAtBind(t *testing.T) {
	p := dialBoth(t, nil)
	for _, q := range []string{"select 1 as a, 2 as b", "show timezone"} {
		qp, pg := p.reviewBoth(&pgproto3.Parse{Query: q},
			&pgproto3.Bind{ResultFormatCodes: []int16{0, 0, 0}},
			&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
		reviewSame(t, q+" with three result formats", qp, pg)
	}
	p.qp.send(&pgproto3.Parse{Query: "select 1 as a, 2 as b"}, &pgproto3.Bind{ResultFormatCodes: []int16{0, 0, 0}}, &pgproto3.Sync{})
	for _, m := range p.qp.until('Z') {
		if e, ok := m.(*pgproto3.ErrorResponse); ok {
			if want := "bind message has 3 result formats but query has 2 columns"; e.Message != want {
				t.Errorf("message %q, want PostgreSQL's %q", e.Message, want)
			}
		}
	}
}
