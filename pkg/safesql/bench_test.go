// Benchmarks: validation cost with and without the cache, against parsing alone.

package safesql

import (
	"github.com/qpkit/qpkit/pkg/tpch"
	"strconv"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

func readQ5(b *testing.B) string {
	b.Helper()
	q, err := tpch.Query(5)
	if err != nil {
		b.Fatal(err)
	}
	return string(q)
}

func benchMiss(b *testing.B, sql string) {
	v, err := New(Options{CacheSize: -1})
	if err != nil {
		b.Fatal(err)
	}
	if err := v.Validate(sql); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(sql); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateSelect1Miss validates SELECT 1 with the cache off.
func BenchmarkValidateSelect1Miss(b *testing.B) { benchMiss(b, "SELECT 1") }

// BenchmarkValidateQ5Miss validates TPC-H Q5 with the cache off.
func BenchmarkValidateQ5Miss(b *testing.B) { benchMiss(b, readQ5(b)) }

// BenchmarkValidateMissDistinct validates distinct texts through the
// cache, so every call misses and also pays for the cache insert.
func BenchmarkValidateMissDistinct(b *testing.B) {
	v, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	texts := make([]string, 100000)
	for i := range texts {
		texts[i] = "SELECT " + strconv.Itoa(i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := v.Validate(texts[i%len(texts)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkValidateHit validates Q5 repeatedly through the cache.
func BenchmarkValidateHit(b *testing.B) {
	v, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	q := readQ5(b)
	if err := v.Validate(q); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(q); err != nil {
			b.Fatal(err)
		}
	}
}

func benchParse(b *testing.B, sql string) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pg_query.Parse(sql); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseOnlySelect1 is pg_query.Parse alone, for comparison.
func BenchmarkParseOnlySelect1(b *testing.B) { benchParse(b, "SELECT 1") }

// BenchmarkParseOnlyQ5 is pg_query.Parse alone, for comparison.
func BenchmarkParseOnlyQ5(b *testing.B) { benchParse(b, readQ5(b)) }
