package tpch

import "testing"

// TestSkipAhead checks that jumping a stream matches stepping it.
func TestSkipAhead(t *testing.T) {
	for _, id := range []int{sdLCmnt, sdPName, sdCAddr, sdOCkey} {
		s := newStream(id)
		step := newStream(id)
		for r := int64(1); r <= 50; r++ {
			s.seekRow(r)
			if s.seed != step.seed {
				t.Fatalf("stream %d row %d: seek %d, step %d", id, r, s.seed, step.seed)
			}
			for i := int64(0); i < step.boundary; i++ {
				step.next()
			}
		}
	}
	// dbgen's NthElement, the slow way.
	v := int64(12345)
	for i := 0; i < 1000; i++ {
		v = v * rngMult % rngMod
	}
	if got := mulMod(12345, powMod(1000)); got != v {
		t.Errorf("powMod: got %d, want %d", got, v)
	}
	if got := padNth(12345, 1000); got != v {
		t.Errorf("padNth: got %d, want %d", got, v)
	}
}

func TestAdvance64(t *testing.T) {
	x := int64(-42)
	for n := int64(0); n < 300; n++ {
		if got := advance64(-42, n); got != x {
			t.Fatalf("advance64(%d) = %d, want %d", n, got, x)
		}
		x = int64(uint64(x)*rng64A + rng64C)
	}
}

// TestUnifMaxLong pins the 32-bit wrap dbgen's a_rnd depends on.
func TestUnifMaxLong(t *testing.T) {
	s := stream{seed: 1}
	if got := s.unifMaxLong(); got > 0 {
		t.Errorf("unifMaxLong = %d, want <= 0", got)
	}
}

// TestPicker checks the tabulated picks against dbgen's float formula at
// and around every threshold and on a sample of the stream.
func TestPicker(t *testing.T) {
	ds, err := loadDists()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*dist{ds.nouns, ds.verbs, ds.adjectives, ds.adverbs, ds.auxiliaries, ds.terminators, ds.articles, ds.prepositions, ds.grammar, ds.np, ds.vp} {
		p := newPicker(d)
		slow := func(v int64) int {
			return int(d.pick[1+int64(float64(v)/float64(rngMod)*float64(d.total()))])
		}
		check := func(v int64) {
			if v < 1 || v >= rngMod {
				return
			}
			if got, want := p.index(uint32(v)), slow(v); got != want {
				t.Fatalf("%v: v=%d picks %d, want %d", d.names[:2], v, got, want)
			}
		}
		for _, th := range p.th {
			for dv := int64(-2); dv <= 2; dv++ {
				check(int64(th) + dv)
			}
		}
		s := newStream(sdText)
		for i := 0; i < 100000; i++ {
			check(s.next())
		}
		check(1)
		check(rngMod - 1)
	}
}
