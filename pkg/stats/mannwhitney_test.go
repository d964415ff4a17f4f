// Tests of MannWhitney against scipy and against its own calibration.

package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Reference values are scipy.stats.mannwhitneyu(a, b, method=...) from
// scipy 1.10.1 (alternative="two-sided", use_continuity=True). "males" and
// "females" are the example in scipy's documentation of mannwhitneyu; its
// exact p can be checked by hand: of the C(9,4) = 126 orderings, 1, 1, 2
// and 3 give U = 20, 19, 18, 17, so p = 2·7/126 = 1/9.
func TestMannWhitneyReference(t *testing.T) {
	lin := func(n int, start, step float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = start + float64(i)*step
		}
		return xs
	}
	for _, c := range []struct {
		name   string
		a, b   []float64
		u, p   float64
		method string
	}{
		{"scipy docs", []float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12}, 17, 0.1111111111111111, "exact"},
		{"by hand", []float64{1, 2}, []float64{3, 4}, 0, 1.0 / 3, "exact"},
		{"exact 8 vs 10",
			[]float64{12.1, 15.3, 9.8, 11.2, 14.7, 10.5, 13.9, 16.4},
			[]float64{17.2, 14.1, 18.8, 16.9, 19.5, 15.8, 20.3, 13.4, 18.1, 21.7},
			8, 0.0030622971799442386, "exact"},
		{"ties",
			[]float64{1.1, 2.2, 2.2, 3.3, 4.4, 4.4, 4.4, 5.5, 7.7, 8.8},
			[]float64{2.2, 4.4, 5.5, 5.5, 6.6, 7.7, 9.9, 9.9, 10.1, 11.1, 12.2},
			21, 0.017574261452286636, "asymptotic"},
		{"25 vs 25", lin(25, 0, 1.5), lin(25, 10.25, 1.5), 171, 0.006222848471189992, "asymptotic"},
		{"constants", []float64{5, 5, 5}, []float64{5, 5}, 3, 1, "asymptotic"},
	} {
		u, p := MannWhitney(c.a, c.b)
		if u != c.u || math.Abs(p-c.p) > 1e-12 {
			t.Errorf("%s (%s): MannWhitney = (%v, %v), want (%v, %v)", c.name, c.method, u, p, c.u, c.p)
		}
	}
}

func TestMannWhitneyEdges(t *testing.T) {
	for _, c := range [][2][]float64{{nil, {1}}, {{1}, nil}, {nil, nil}, {{1, math.NaN()}, {2}}} {
		if u, p := MannWhitney(c[0], c[1]); !math.IsNaN(u) || !math.IsNaN(p) {
			t.Errorf("MannWhitney(%v, %v) = (%v, %v), want NaNs", c[0], c[1], u, p)
		}
	}
	if _, p := MannWhitney([]float64{7}, []float64{7}); p != 1 {
		t.Errorf("one equal value each: p = %v, want 1", p)
	}
	// Both sizes > 20 with every value equal: the variance is 0.
	same := make([]float64, 30)
	if u, p := MannWhitney(same, same); u != 450 || p != 1 {
		t.Errorf("identical constants: (%v, %v), want (450, 1)", u, p)
	}
	// The exact tail for 20 vs 20 at U = 0 is 2/C(40, 20).
	if got, want := exactP(0, 20, 20), 2/137846528820.0; math.Abs(got-want) > 1e-25 {
		t.Errorf("exactP(0, 20, 20) = %v, want %v", got, want)
	}
}

func TestMannWhitneySymmetry(t *testing.T) {
	a, b := sample(15, 1), sample(23, 2)
	for i := range b {
		b[i] += 300
	}
	ua, pa := MannWhitney(a, b)
	ub, pb := MannWhitney(b, a)
	if ua+ub != 15*23 || math.Abs(pa-pb) > 1e-15 {
		t.Errorf("U(a,b) = %v, U(b,a) = %v, p = %v and %v", ua, ub, pa, pb)
	}
}

// TestMannWhitneyCalibration checks both the exact and the normal path:
// a clear shift gives a tiny p, and under the null hypothesis p < 0.05 in
// about 5% of draws.
func TestMannWhitneyCalibration(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 4))
	draw := func(n int, shift float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = r.NormFloat64() + shift
		}
		return xs
	}
	if _, p := MannWhitney(draw(200, 0), draw(200, 1)); p > 1e-6 {
		t.Errorf("shift of 1 sd, n=200: p = %v, want < 1e-6", p)
	}
	if _, p := MannWhitney(draw(12, 0), draw(12, 3)); p > 1e-3 {
		t.Errorf("shift of 3 sd, n=12 (exact): p = %v, want < 1e-3", p)
	}
	for _, n := range []int{12, 60} {
		const trials = 400
		small := 0
		for range trials {
			if _, p := MannWhitney(draw(n, 0), draw(n, 0)); p < 0.05 {
				small++
			}
		}
		t.Logf("n=%d: p < 0.05 in %d/%d null draws", n, small, trials)
		if small < 4 || small > 40 {
			t.Errorf("n=%d: p < 0.05 in %d/%d null draws, want about 5%%", n, small, trials)
		}
	}
	if _, p := MannWhitney(draw(100, 0), draw(100, 0)); p < 0.05 {
		t.Errorf("same distribution, n=100: p = %v, want >= 0.05", p)
	}
}
