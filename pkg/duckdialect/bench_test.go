package duckdialect

import (
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
