//go:build !linux

// Text pool memory on platforms without the Linux mapping path.

package tpch

// allocPool returns ordinary heap memory for the pool.
func allocPool(n int) ([]byte, error) {
	return make([]byte, n), nil
}
