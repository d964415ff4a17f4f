package tpch

import (
	"math"
	"slices"
	"testing"
)

func TestRequestCheck(t *testing.T) {
	two, three := 2, 3
	tables, opt, err := Request{SF: 0.01, Table: "ORDERS", Format: "csv", Parts: &three, Part: &two, Jobs: 4}.Check()
	if err != nil || !slices.Equal(tables, []Table{Orders}) || opt.Format != FormatCSV || opt.Parts != 3 || opt.Part != 2 || opt.Jobs != 4 {
		t.Errorf("one chunk of orders: %v %+v %v", tables, opt, err)
	}
	for _, table := range []string{"", "all"} {
		tables, _, err := Request{SF: 1, Table: table, Format: "tbl", Dir: "out"}.Check()
		if err != nil || !slices.Equal(tables, Tables) {
			t.Errorf("table %q with a dir: %v %v", table, tables, err)
		}
	}
	zero := 0
	for _, c := range []struct {
		r   Request
		msg string
	}{
		{Request{SF: math.Inf(1), Table: "nation", Format: "tbl"}, "--sf +Inf is not a number"},
		{Request{SF: 2e9, Table: "nation", Format: "tbl"}, "--sf 2e+09 is larger than 1e+09"},
		{Request{SF: 1, Table: "nation", Format: "xml"}, `--format: unknown format "xml" (want tbl, copy or csv)`},
		{Request{SF: 1, Format: "tbl"}, "--table is required when writing to stdout (or give --out DIR for all tables)"},
		{Request{SF: 1, Table: "nation", Format: "tbl", Parts: &zero, Part: &zero}, "--parts 0 must be at least 1"},
		{Request{SF: 1, Table: "nation", Format: "tbl", Parts: &two, Part: &three}, "--part 3 is out of range 1..2"},
		{Request{SF: 1, Table: "nation", Format: "tbl", Jobs: -1}, "--jobs -1 must not be negative"},
	} {
		if _, _, err := c.r.Check(); err == nil || err.Error() != c.msg {
			t.Errorf("%+v: error %v, want %q", c.r, err, c.msg)
		}
	}
}
