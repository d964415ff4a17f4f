package snapshot

import (
	"strings"
	"testing"
	"time"
)

func TestProgressLine(t *testing.T) {
	tb := &table{Schema: "public", Name: "lineitem", Pages: 1000}
	s := &tableStats{}
	s.rows.Store(50000)
	s.pagesDone.Store(250)
	got := progressLine(tb, s, 10*time.Second)
	want := "public.lineitem: 50000 rows, 5.0k rows/s, 250/1000 pages (25%), ETA 30s"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	empty := progressLine(&table{Schema: "public", Name: "e"}, &tableStats{}, time.Second)
	if strings.Contains(empty, "ETA") || strings.Contains(empty, "pages") {
		t.Errorf("empty table: %q", empty)
	}
}
