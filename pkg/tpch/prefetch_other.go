//go:build !amd64

// Cache prefetch hint: a no-op where no assembly version exists.

package tpch

func prefetch(addr uintptr) {}
