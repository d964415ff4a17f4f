package tpch

import (
	"testing"
	"time"
)

func TestTally(t *testing.T) {
	var c Tally
	if got, want := c.Line(0), "nation              0 rows        0.0 MB      0.0 MB/s     0.0s"; got != want {
		t.Errorf("empty tally:\n got %q\nwant %q", got, want)
	}
	c.Add(Orders, 1000, 1_500_000)
	c.Add(Lineitem, 3000, 4_500_000)
	if got, want := c.Line(2*time.Second), "lineitem         4000 rows        6.0 MB      3.0 MB/s     2.0s"; got != want {
		t.Errorf("after two blocks:\n got %q\nwant %q", got, want)
	}
}
