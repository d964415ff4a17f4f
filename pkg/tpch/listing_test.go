package tpch

import (
	"regexp"
	"strings"
	"testing"
)

func TestWriteRowCounts(t *testing.T) {
	var b strings.Builder
	if err := WriteRowCounts(&b, 0.01); err != nil {
		t.Fatal(err)
	}
	want := "nation\t25\nregion\t5\npart\t2000\nsupplier\t100\npartsupp\t8000\ncustomer\t1500\norders\t15000\nlineitem\t60175\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	if err := WriteRowCounts(&b, 0); err == nil {
		t.Error("scale factor 0 accepted")
	}
}

func TestWriteQueries(t *testing.T) {
	var b strings.Builder
	if err := WriteQueries(&b); err != nil {
		t.Fatal(err)
	}
	parts := regexp.MustCompile(`(?m)^-- Q([0-9]+)$`).Split(b.String(), -1)
	if len(parts) != NumQueries+1 || parts[0] != "" {
		t.Fatalf("split into %d pieces", len(parts))
	}
	for i, p := range parts[1:] {
		q, _ := Query(i + 1)
		if p != "\n"+q+"\n\n" {
			t.Errorf("Q%d: %.60q", i+1, p)
		}
	}
}
