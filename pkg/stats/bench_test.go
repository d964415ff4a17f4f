// Benchmarks: 10,000-resample bootstrap intervals at several sample sizes.

package stats

import (
	"fmt"
	"testing"
)

func BenchmarkBootstrapQuantileCI(b *testing.B) {
	const resamples = 10_000
	for _, n := range []int{20, 1_000, 100_000} {
		for _, q := range []float64{0.5, 0.99} {
			xs := sample(n, 1)
			b.Run(fmt.Sprintf("n=%d/q=%v", n, q), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					BootstrapQuantileCI(xs, q, 0.95, resamples, 1)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(resamples*float64(n)), "ns/draw")
			})
		}
	}
}

func BenchmarkBootstrapQuantileDiffCI(b *testing.B) {
	x, y := sample(1_000, 1), sample(1_000, 2)
	b.ReportAllocs()
	for b.Loop() {
		BootstrapQuantileDiffCI(x, y, 0.5, 0.95, 10_000, 1)
	}
}

func BenchmarkMannWhitney(b *testing.B) {
	for _, n := range []int{20, 10_000} {
		x, y := sample(n, 1), sample(n, 2)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				MannWhitney(x, y)
			}
		})
	}
}
