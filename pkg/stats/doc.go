// Package stats computes benchmark statistics for perfstat: quantiles,
// summaries, bootstrap confidence intervals and the Mann-Whitney U test.
//
// Samples are latencies in nanoseconds as float64. Everything is pure Go and
// deterministic: the bootstrap takes an explicit seed and documents its exact
// procedure, so a confidence interval printed with its seed, resample count
// and confidence level can be recomputed bit for bit on another machine.
//
// The functions return NaN rather than panicking on input they cannot
// describe (an empty sample, q outside [0, 1]). A reporting tool keeps
// printing its other numbers, and the caller is expected to print the
// matching warning next to the NaN (see TailWarnings), not hide it.
//
// Inputs must not contain NaN; results for such input are unspecified except
// where a function says otherwise.
package stats
