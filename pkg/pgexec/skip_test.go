package pgexec

import (
	"strings"
	"testing"
)

// TestRunSkip drops leading rows on the client; the row cap counts after
// them, and the statement text is unchanged.
func TestRunSkip(t *testing.T) {
	e := newExec(t, newPool(t, 1, true), Options{MaxRows: 100})
	ctx := testCtx(t)
	const q = "SELECT g FROM generate_series(1, 250) g"
	cases := []struct {
		skip, rows int
		truncated  bool
		head, tail string
	}{
		{0, 100, true, `"rows":[[1],`, `[100]],`},
		{100, 100, true, `"rows":[[101],`, `[200]],`},
		{200, 50, false, `"rows":[[201],`, `[250]],`},
		{150, 100, false, `"rows":[[151],`, `[250]],`},
		{250, 0, false, `"rows":[]`, `"rows":[]`},
		{1000, 0, false, `"rows":[]`, `"rows":[]`},
	}
	for _, c := range cases {
		res, err := e.RunSkip(ctx, q, nil, c.skip, nil)
		if err != nil {
			t.Fatalf("skip %d: %v", c.skip, err)
		}
		doc := string(res.JSON)
		if res.Rows != c.rows || res.Truncated != c.truncated || !strings.Contains(doc, c.head) || !strings.Contains(doc, c.tail) {
			t.Errorf("skip %d: rows %d truncated %v, want %d %v; %s", c.skip, res.Rows, res.Truncated, c.rows, c.truncated, doc)
		}
	}
	if _, err := e.RunSkip(ctx, q, nil, -1, nil); err == nil {
		t.Error("skip -1 accepted")
	}
	// The server stops after skip+MaxRows+1 rows.
	res, err := e.RunSkip(ctx, "SELECT generate_series(1, 10000000000) AS g", nil, 1000, nil)
	if err != nil || res.Rows != 100 || res.TruncatedBy != "rows" || !strings.Contains(string(res.JSON), `[[1001],`) {
		t.Fatalf("endless series, skip 1000: %v %+v", err, res)
	}
	assertPoolIdle(t, e.pool)
}
