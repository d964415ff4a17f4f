//go:build !unix

// Reading a text pool cache file where there is no mmap.

package tpch

import (
	"io"
	"os"
)

func mapFile(f *os.File, n int) ([]byte, error) {
	b := make([]byte, n)
	_, err := io.ReadFull(f, b)
	return b, err
}

func unmapFile([]byte) {}
