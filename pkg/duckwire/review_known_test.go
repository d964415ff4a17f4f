package duckwire

// Tests of limitations once documented as known, fixed since.

import (
	"strings"
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

// A built-in setting qpanalytics keeps no value for (work_mem), set in a
// block that rolls back or by SET LOCAL, is unknown again afterwards, as
// it was before the SET; it used to come back empty. A custom (dotted)
// setting stays as an empty placeholder, as in PostgreSQL.
func TestKnownReviewBuiltinSettingAfterRollback(t *testing.T) {
	p := dialBoth(t, nil)
	for _, q := range []string{
		"show work_mem",
		"begin; set work_mem = '64MB'; rollback; show work_mem",
		"begin; set local work_mem = '64MB'; commit; show work_mem",
		"begin; savepoint a; set work_mem = '64MB'; rollback to a; commit; show work_mem",
	} {
		p.qp.send(&pgproto3.Query{String: q})
		if got := summary(p.qp.until('Z')); !strings.Contains(got, "E(42704)") {
			t.Errorf("%s: %s, want 42704 as before any SET", q, got)
		}
	}
	qp, pg := p.reviewBoth(&pgproto3.Query{String: "begin; set zz.custom = 'x'; rollback; show zz.custom"})
	reviewSame(t, "custom setting after rollback", qp, pg)
}
