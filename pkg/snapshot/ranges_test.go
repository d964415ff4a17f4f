package snapshot

import (
	"reflect"
	"testing"
)

func TestSplitPages(t *testing.T) {
	cases := []struct {
		pages, per int64
		want       []pageRange
	}{
		{0, 10, []pageRange{{0, 0, -1}}},
		{5, 10, []pageRange{{0, 0, -1}}},
		{10, 10, []pageRange{{0, 0, -1}}},
		{11, 10, []pageRange{{0, 0, 10}, {0, 10, -1}}},
		{3, 1, []pageRange{{0, 0, 1}, {0, 1, 2}, {0, 2, -1}}},
		{25, 10, []pageRange{{0, 0, 10}, {0, 10, 20}, {0, 20, -1}}},
	}
	for _, c := range cases {
		if got := splitPages(0, c.pages, c.per); !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitPages(%d, %d) = %v, want %v", c.pages, c.per, got, c.want)
		}
	}
	// Every page is covered exactly once, and the last range is open.
	for pages := int64(0); pages < 40; pages++ {
		for per := int64(1); per < 12; per++ {
			rs := splitPages(0, pages, per)
			var covered int64
			for i, r := range rs {
				if r.From != covered || (i < len(rs)-1) == r.open() {
					t.Fatalf("splitPages(%d, %d) = %v", pages, per, rs)
				}
				covered += r.pagesIn(pages)
				if !r.open() {
					covered = r.To
				}
			}
			if covered != pages {
				t.Fatalf("splitPages(%d, %d) covers %d pages", pages, per, covered)
			}
		}
	}
}

func TestRangeWhere(t *testing.T) {
	for r, want := range map[pageRange]string{
		{0, 0, -1}: "",
		{0, 8, -1}: " WHERE ctid >= '(8,0)'::tid",
		{0, 0, 8}:  " WHERE ctid >= '(0,0)'::tid AND ctid < '(8,0)'::tid",
	} {
		if got := r.where(); got != want {
			t.Errorf("%v.where() = %q, want %q", r, got, want)
		}
	}
	if got := rangePages(100, 4); got != 64 {
		t.Errorf("rangePages(100, 4) = %d", got)
	}
	if got := rangePages(16000, 4); got != 1000 {
		t.Errorf("rangePages(16000, 4) = %d", got)
	}
}
