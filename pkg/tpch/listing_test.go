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
	want := "nation 25\nregion 5\npart 2000\nsupplier 100\npartsupp 8000\ncustomer 1500\norders 15000\nlineitem 60175\n"
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
