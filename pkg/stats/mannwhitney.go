// Mann-Whitney U (Wilcoxon rank-sum) test of two independent samples.

package stats

import (
	"math"
	"slices"
)

// exactMax is the largest size of either sample for which MannWhitney uses
// the exact null distribution (when there are no ties). Its counts reach
// C(40, 20) ≈ 1.4e11, well within int64, and take microseconds.
const exactMax = 20

// MannWhitney runs the two-sided Mann-Whitney U test of whether values from
// a's population tend to be larger or smaller than values from b's. It is
// rank-based, so a few huge latency outliers cannot dominate it the way they
// dominate a t-test, and it assumes nothing about the distribution's shape.
//
// u is the U statistic of a: the number of pairs (x from a, y from b) with
// x > y, ties counting one half; it equals R_a - n_a(n_a+1)/2 with R_a the
// sum of a's mid-ranks in the pooled sample. It is scipy.stats.mannwhitneyu's
// first result for (a, b). u ranges over [0, n_a·n_b]; n_a·n_b/2 is "no
// difference", and u < n_a·n_b/2 means a tends to be faster (smaller).
//
// p is the two-sided p-value:
//   - Exact, when both samples have at most 20 values and there are no ties:
//     p = 2·min(P(U <= u), P(U >= u)) under the null distribution of U,
//     counted exactly, capped at 1. This is scipy's method="exact".
//   - Otherwise the normal approximation with tie and continuity
//     corrections: mean n_a·n_b/2, variance
//     n_a·n_b/12 · ((N+1) - Σ(t³-t)/(N(N-1))) over the groups of t tied
//     values in the pooled N, z = (|u - mean| - 0.5)/sd and p = 2·(1-Φ(z))
//     capped at 1. This is scipy's method="asymptotic" with
//     use_continuity=True.
//
// Note that scipy's default method="auto" picks between the two by a
// different rule, so compare against scipy with the method named.
//
// When all values of both samples are equal the variance is 0 and p is 1:
// there is no evidence of any difference. u and p are both NaN when either
// sample is empty or any value is NaN.
func MannWhitney(a, b []float64) (u, p float64) {
	na, nb := len(a), len(b)
	if na == 0 || nb == 0 || slices.ContainsFunc(a, math.IsNaN) || slices.ContainsFunc(b, math.IsNaN) {
		return math.NaN(), math.NaN()
	}
	type obs struct {
		v     float64
		fromA bool
	}
	pool := make([]obs, 0, na+nb)
	for _, v := range a {
		pool = append(pool, obs{v, true})
	}
	for _, v := range b {
		pool = append(pool, obs{v, false})
	}
	slices.SortFunc(pool, func(x, y obs) int {
		switch {
		case x.v < y.v:
			return -1
		case x.v > y.v:
			return 1
		}
		return 0
	})

	var rankSumA, tieSum float64
	for i := 0; i < len(pool); {
		j, inA := i, 0
		for ; j < len(pool) && pool[j].v == pool[i].v; j++ {
			if pool[j].fromA {
				inA++
			}
		}
		// Positions i..j-1 hold ranks i+1..j; each gets their mean.
		rankSumA += float64(inA) * float64(i+1+j) / 2
		if t := float64(j - i); t > 1 {
			tieSum += t*t*t - t
		}
		i = j
	}
	fa, fb := float64(na), float64(nb)
	u = rankSumA - fa*(fa+1)/2

	if tieSum == 0 && na <= exactMax && nb <= exactMax {
		return u, exactP(int(u), na, nb)
	}
	n := fa + fb
	variance := fa * fb / 12 * ((n + 1) - tieSum/(n*(n-1)))
	if variance <= 0 {
		return u, 1
	}
	z := (math.Abs(u-fa*fb/2) - 0.5) / math.Sqrt(variance)
	return u, min(1, math.Erfc(z/math.Sqrt2))
}

// exactP returns the exact two-sided p-value of U = u for samples of m and n
// values without ties. Under the null hypothesis every one of the C(m+n, m)
// orderings is equally likely, and the number giving U = k is the
// coefficient of q^k in the Gaussian binomial coefficient [m+n choose m]_q,
// built here as the product over i = 1..m of (1-q^(n+i))/(1-q^i); each
// partial product is itself a polynomial, so every division is exact.
func exactP(u, m, n int) float64 {
	c := make([]int64, m*n+1)
	c[0] = 1
	for i := 1; i <= m; i++ {
		s := n + i
		for k := len(c) - 1; k >= s; k-- { // multiply by 1 - q^s
			c[k] -= c[k-s]
		}
		// Terms above q^(m·n) fall off the product, but the quotient's
		// coefficients depend only on lower ones and its degree is i·n.
		for k := i; k < len(c); k++ { // divide by 1 - q^i
			c[k] += c[k-i]
		}
	}
	var total, atMost, atLeast int64
	for k, v := range c {
		total += v
		if k <= u {
			atMost += v
		}
		if k >= u {
			atLeast += v
		}
	}
	return min(1, 2*float64(min(atMost, atLeast))/float64(total))
}
