package tpch

import (
	"context"
	"io"
	"testing"
)

// benchTable generates one table at SF 0.1 per iteration (after the text
// pool is built once) and reports throughput.
func benchTable(b *testing.B, t Table, jobs int) {
	g, err := NewGenerator(0.1)
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for b.Loop() {
		st, err := g.WriteTable(context.Background(), io.Discard, t, Options{Jobs: jobs})
		if err != nil {
			b.Fatal(err)
		}
		n = st.Bytes
	}
	b.SetBytes(n)
}

func BenchmarkNation(b *testing.B)   { benchTable(b, Nation, 1) }
func BenchmarkPart(b *testing.B)     { benchTable(b, Part, 1) }
func BenchmarkPartSupp(b *testing.B) { benchTable(b, PartSupp, 1) }
func BenchmarkSupplier(b *testing.B) { benchTable(b, Supplier, 1) }
func BenchmarkCustomer(b *testing.B) { benchTable(b, Customer, 1) }
func BenchmarkOrders(b *testing.B)   { benchTable(b, Orders, 1) }
func BenchmarkLineitem(b *testing.B) { benchTable(b, Lineitem, 1) }

func BenchmarkLineitemJobs2(b *testing.B) { benchTable(b, Lineitem, 2) }

// BenchmarkAllTables writes all eight tables at SF 0.1 in one pass per group.
func BenchmarkAllTables(b *testing.B) {
	g, err := NewGenerator(0.1)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		_, err := g.WriteTables(context.Background(), Tables, func(Table) (io.Writer, error) { return io.Discard, nil }, Options{Jobs: 1})
		if err != nil {
			b.Fatal(err)
		}
	}
}
