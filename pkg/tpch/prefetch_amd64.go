// Cache prefetch hint for the random text pool reads (amd64 assembly).

package tpch

// prefetch asks the CPU to start loading the cache line at addr. It never
// faults and has no effect on results.
//
//go:noescape
func prefetch(addr uintptr)
