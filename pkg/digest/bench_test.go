// Benchmarks: normalizing pgbench's and TPC-H's statements, and the store's hot path.

package digest

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/qpkit/qpkit/pkg/tpch"
)

func BenchmarkNormalize(b *testing.B) {
	q1, err := tpch.Query(1)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, sql string }{
		{"pgbench_select", pgbenchSimple[2]},
		{"pgbench_update", pgbenchSimple[1]},
		{"pgbench_insert", pgbenchSimple[5]},
		{"tpch_q1", q1},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.sql)))
			loop(b, func() { Normalize(c.sql) })
		})
	}
}

func BenchmarkFingerprintTPCH(b *testing.B) {
	for n := 1; n <= tpch.NumQueries; n++ {
		q, err := tpch.Query(n)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("q%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(q)))
			loop(b, func() { Fingerprint(q) })
		})
	}
}

func BenchmarkStoreObserve(b *testing.B) {
	s := NewStore(0)
	for _, sql := range pgbenchSimple {
		s.Observe("main", "primary", sql, time.Millisecond, 1, "")
	}
	// A long parameterized statement (TPC-H Q1 with $n for its
	// constants, 481 bytes), as an ORM sends it.
	q1, err := tpch.Query(1)
	if err != nil {
		b.Fatal(err)
	}
	q1Params, _ := Normalize(q1)
	// serial_extended and serial_long_params repeat statements without
	// constants: after the first time they come from the text cache.
	for _, c := range []struct {
		name  string
		stmts []string
	}{
		{"serial", pgbenchSimple},
		{"serial_extended", pgbenchExtended},
		{"serial_long_params", []string{q1Params}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			loop(b, func() {
				s.Observe("main", "primary", c.stmts[i%len(c.stmts)], time.Millisecond, 1, "")
				i++
			})
		})
	}
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				s.Observe("main", "primary", pgbenchSimple[i%len(pgbenchSimple)], time.Millisecond, 1, "")
				i++
			}
		})
	})
}

// loop runs f in b.Loop on a locked OS thread and also reports the thread's
// CPU time per call (cpu-ns/op, Linux only): on a shared machine ns/op
// includes the time other processes held the CPU, cpu-ns/op does not (nor
// does it include the garbage collector's background workers).
func loop(b *testing.B, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, n := threadCPU(), 0
	for b.Loop() {
		f()
		n++
	}
	if haveThreadCPU && n > 0 {
		b.ReportMetric(float64(threadCPU()-t0)/float64(n), "cpu-ns/op")
	}
}
