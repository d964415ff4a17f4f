package tpch

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestTextPoolCacheRoundTrip(t *testing.T) {
	pool, err := loadTextPool()
	if err != nil {
		t.Fatal(err)
	}
	ds, err := loadDists()
	if err != nil {
		t.Fatal(err)
	}
	g, err := compileGrammar(ds)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "pool")
	if err := writePoolFile(path, pool); err != nil {
		t.Fatal(err)
	}
	cached, err := readPoolFile(path, g)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	defer unmapFile(cached.buf)
	const step = 1 << 20
	for off := int64(0); off < textPoolSize; off += step {
		n := min(int64(step), textPoolSize-off)
		// pool.slice is only valid within one segment; compare by bridge-sized pieces.
		for d := int64(0); d < n; d += bridge {
			k := min(int64(bridge), n-d)
			if !bytes.Equal(pool.slice(off+d, k), cached.slice(off+d, k)) {
				t.Fatalf("cached pool differs at logical offset %d", off+d)
			}
		}
	}

	// A file of the wrong size or with the wrong bytes is stale, not used.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(t.TempDir(), "short")
	os.WriteFile(short, raw[:len(raw)-1], 0o644)
	if _, err := readPoolFile(short, g); !errors.Is(err, errStalePool) {
		t.Errorf("truncated cache: err = %v, want errStalePool", err)
	}
	raw[len(poolFileHeader())+100] ^= 1
	bad := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(bad, raw, 0o644)
	if _, err := readPoolFile(bad, g); !errors.Is(err, errStalePool) {
		t.Errorf("corrupted cache: err = %v, want errStalePool", err)
	}
	if _, err := readPoolFile(filepath.Join(t.TempDir(), "missing"), g); err == nil {
		t.Error("missing cache file read without error")
	}
}
