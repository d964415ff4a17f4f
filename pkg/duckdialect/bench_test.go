package duckdialect

import (
	"fmt"
	"testing"

	"github.com/qpkit/qpkit/pkg/tpch"
)

// BenchmarkTranslateQ1 measures one translation of TPC-H Q1 (parse,
// rewrite, deparse) without the cache: the cost of a new statement.
func BenchmarkTranslateQ1(b *testing.B) {
	q, err := tpch.Query(1)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := translate(q); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTranslateQ1Cached is the cost of a repeated statement.
func BenchmarkTranslateQ1Cached(b *testing.B) {
	q, err := tpch.Query(1)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Translate(q); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTranslateAll22 translates the 22 TPC-H queries per iteration.
func BenchmarkTranslateAll22(b *testing.B) {
	var qs []string
	for n := 1; n <= tpch.NumQueries; n++ {
		q, err := tpch.Query(n)
		if err != nil {
			b.Fatal(err)
		}
		qs = append(qs, q)
	}
	for b.Loop() {
		for _, q := range qs {
			if _, err := translate(q); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestTranslateConcurrent translates the 22 queries from several
// goroutines at once (the server calls Translate per connection) and
// expects the serial results, uncached and cached.
func TestTranslateConcurrent(t *testing.T) {
	want := map[string]string{}
	for n := 1; n <= tpch.NumQueries; n++ {
		q, err := tpch.Query(n)
		if err != nil {
			t.Fatal(err)
		}
		if want[q], err = translate(q); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			for q, w := range want {
				got, err := Translate(q)
				if err == nil && got != w {
					err = fmt.Errorf("concurrent translation differs:\n%s\n%s", got, w)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
