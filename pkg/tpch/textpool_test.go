package tpch

import (
	"bytes"
	"testing"
)

func BenchmarkTextPool(b *testing.B) {
	ds, err := loadDists()
	if err != nil {
		b.Fatal(err)
	}
	g, err := compileGrammar(ds)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(textPoolSize)
	for b.Loop() {
		if _, err := buildTextPool(g, 2); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTextPoolSequential(b *testing.B) {
	ds, err := loadDists()
	if err != nil {
		b.Fatal(err)
	}
	g, err := compileGrammar(ds)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, textPoolSize+poolSlack)
	b.SetBytes(textPoolSize)
	for b.Loop() {
		fillText(g, buf, textPoolSize)
	}
}

// TestTextPoolParallel checks that the pool built in segments reads the
// same bytes as dbgen's sequential construction, for several worker counts.
func TestTextPoolParallel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the 300 MiB pool several times")
	}
	ds, err := loadDists()
	if err != nil {
		t.Fatal(err)
	}
	g, err := compileGrammar(ds)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, textPoolSize+poolSlack)
	fillText(g, want, textPoolSize)
	want = want[:textPoolSize]
	if bytes.IndexByte(want, 0) >= 0 {
		t.Fatal("pool contains NUL")
	}
	for _, workers := range []int{2, 3} {
		p, err := buildTextPool(g, workers)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.starts) != workers-1 {
			t.Errorf("%d workers: %d segments, the parallel build fell back", workers, len(p.starts)+1)
		}
		// Compare in windows that cross every segment boundary.
		bounds := append([]int64{0}, p.starts...)
		bounds = append(bounds, textPoolSize)
		for i := 0; i+1 < len(bounds); i++ {
			for off := bounds[i]; off < bounds[i+1]; {
				n := min(int64(1<<20), bounds[i+1]-off)
				if !bytes.Equal(p.slice(off, n), want[off:off+n]) {
					t.Fatalf("%d workers: bytes at %d differ", workers, off)
				}
				off += n
			}
			if i > 0 {
				// a comment straddling the boundary
				off := bounds[i] - 100
				if !bytes.Equal(p.slice(off, 200), want[off:off+200]) {
					t.Fatalf("%d workers: straddling read at %d differs", workers, off)
				}
			}
		}
	}
}
