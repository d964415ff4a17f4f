//go:build unix

// Mapping a text pool cache file read-only.

package tpch

import (
	"os"
	"syscall"
)

func mapFile(f *os.File, n int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, n, syscall.PROT_READ, syscall.MAP_SHARED)
}

func unmapFile(m []byte) { syscall.Munmap(m) }
