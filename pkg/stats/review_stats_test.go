// Review of pkg/stats: each test asserts the documented or textbook
// behaviour and fails on the code as reviewed.

package stats

import (
	"math"
	"testing"
)

// TestStatsReviewQuantileInfiniteNeighbours: type 7 between two order statistics
// that are both +Inf (or -Inf and a finite value) is that infinity; R's
// quantile(type = 7), which the doc comment names as the reference, returns
// Inf / -Inf here (it skips the interpolation when x[k+1] == x[k], and
// (1-h)·(-Inf) + h·1 is -Inf). The package promises NaN only for an empty
// sample or a bad q, and its own tests already take care not to compute
// 0·Inf, so infinite values are meant to be supported. lerp computes
// a + frac·(b-a), and b-a is Inf-Inf = NaN (or -Inf + Inf = NaN).
func TestStatsReviewQuantileInfiniteNeighbours(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"Quantile([1 +Inf +Inf], 0.75)", Quantile([]float64{1, inf, inf}, 0.75), inf},
		{"Median([+Inf +Inf])", Median([]float64{inf, inf}), inf},
		{"Summarize([5 +Inf +Inf]).P95", Summarize([]float64{5, inf, inf}).P95, inf},
		{"Quantile([-Inf 1], 0.25)", Quantile([]float64{-inf, 1}, 0.25), -inf},
		{"Quantile([-Inf -Inf 0], 0.25)", Quantile([]float64{-inf, -inf, 0}, 0.25), -inf},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// Every bootstrap estimate of the 0.9-quantile of [1 +Inf +Inf +Inf]
	// interpolates between resample order statistics 2 and 3, so it is 1
	// (both are 1) or +Inf: the interval's upper end is +Inf and neither
	// end is NaN (now every estimate with two +Inf neighbours is NaN).
	iv := BootstrapQuantileCI([]float64{1, inf, inf, inf}, 0.9, 0.95, 1000, 1)
	if math.IsNaN(iv.Lo) || iv.Hi != inf {
		t.Errorf("BootstrapQuantileCI([1 +Inf +Inf +Inf], 0.9) = %v, want [x, +Inf] with x not NaN", iv)
	}
}

// TestStatsReviewQuantileOverflow: the type-7 quantile lies between x[k] and
// x[k+1], so it never leaves [min, max]. lerp's b-a overflows for finite
// values of opposite sign and large magnitude, and the median of
// [-MaxFloat64, MaxFloat64] comes out +Inf, above the sample's maximum;
// R's (1-h)·x[k] + h·x[k+1] gives 0.
func TestStatsReviewQuantileOverflow(t *testing.T) {
	xs := []float64{-math.MaxFloat64, math.MaxFloat64}
	if got := Quantile(xs, 0.5); got != 0 {
		t.Errorf("Quantile([-MaxFloat64 MaxFloat64], 0.5) = %v, want 0", got)
	}
	if got := Quantile(xs, 0.25); !(got >= xs[0] && got <= xs[1]) {
		t.Errorf("Quantile([-MaxFloat64 MaxFloat64], 0.25) = %v, outside [min, max]", got)
	}
}
