// The 300 MiB text pool that every comment column is cut from.

package tpch

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
)

// textPoolSize is dbgen's TEXT_POOL_SIZE. Comments are substrings of the
// pool at uniformly drawn offsets, so the whole pool is needed even for a
// tiny scale factor.
const textPoolSize = 300 * 1024 * 1024

// poolSlack lets word writes run past the end of the pool with fixed-size
// stores; the extra bytes are never exposed.
const poolSlack = 1024

// word is a grammar word with what follows it in the text ("packages ",
// "special, ", "about the ") padded to fixed-size stores.
type word struct {
	b [24]byte
	n int
}

// picker maps a raw stream value straight to an entry of a distribution.
// dbgen draws j = 1 + (int)(v / (2^31-1) * total) in floating point and
// scans for the first cumulative weight >= j. That is a monotonic step
// function of v, so it is tabulated once as thresholds: th[i] is the
// smallest v that selects an entry after i. A table indexed by the top
// bits of v gives the entry at the start of each bucket; buckets are
// narrower than any entry, so at most one threshold needs comparing.
type picker struct {
	shift  uint
	bucket []uint16
	th     []uint32
}

func newPicker(d *dist) picker {
	total := float64(d.total())
	sel := func(v int64) int {
		j := 1 + int64(float64(v)/float64(rngMod)*total)
		return int(d.pick[j])
	}
	n := len(d.names)
	p := picker{th: make([]uint32, n)}
	minGap := int64(rngMod)
	prev := int64(0)
	for i := 0; i < n-1; i++ {
		// smallest v in [1, rngMod-1] with sel(v) > i
		lo, hi := int64(1), int64(rngMod-1)
		for lo < hi {
			mid := (lo + hi) / 2
			if sel(mid) > i {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		p.th[i] = uint32(lo)
		if lo > prev && lo-prev < minGap {
			minGap = lo - prev
		}
		prev = lo
	}
	p.th[n-1] = ^uint32(0)
	for p.shift = 31; p.shift > 0 && int64(1)<<p.shift > minGap; p.shift-- {
	}
	p.bucket = make([]uint16, (int64(rngMod)>>p.shift)+1)
	for b := range p.bucket {
		v := int64(b) << p.shift
		if v < 1 {
			v = 1
		}
		p.bucket[b] = uint16(sel(v))
	}
	return p
}

// index returns the entry a stream value v selects.
func (p *picker) index(v uint32) int {
	i := int(p.bucket[v>>p.shift])
	// branch-free "if v >= th[i] { i++ }": the outcome is unpredictable
	return i + 1 + int((int64(v)-int64(p.th[i]))>>63)
}

// wordTable is the words of one distribution with one kind of trailer.
type wordTable struct {
	sel   picker
	words []word
}

func newWordTable(d *dist, suffix string) (*wordTable, error) {
	t := &wordTable{sel: newPicker(d)}
	for _, name := range d.names {
		s := name + suffix
		if len(s) > len(word{}.b) {
			return nil, fmt.Errorf("text pool: word %q is too long", s)
		}
		var w word
		copy(w.b[:], s)
		w.n = len(s)
		t.words = append(t.words, w)
	}
	return t, nil
}

// phrase is one noun- or verb-phrase form: a list of word tables.
type phrase []*wordTable

// phraseSet is np or vp: weighted phrase forms.
type phraseSet struct {
	sel   picker
	forms []phrase
}

// Sentence parts of the first-level grammar.
const (
	partNP = iota
	partVP
	partPrep
	partTerm
)

type grammarSet struct {
	sel   picker
	forms [][]int
}

// textGrammar is the compiled sentence grammar of dists.dss.
type textGrammar struct {
	grammar grammarSet
	np, vp  phraseSet
	preps   *wordTable // preposition followed by " the "
	terms   *wordTable // terminator followed by a space; written over the previous space
}

func compileGrammar(ds *distSet) (*textGrammar, error) {
	g := &textGrammar{}
	var err error
	tables := map[string]*wordTable{}
	table := func(d *dist, suffix string) *wordTable {
		key := fmt.Sprintf("%p%s", d, suffix)
		if t, ok := tables[key]; ok {
			return t
		}
		t, e := newWordTable(d, suffix)
		if e != nil && err == nil {
			err = e
		}
		tables[key] = t
		return t
	}
	phrases := func(d *dist, kinds map[byte]*dist) phraseSet {
		ps := phraseSet{sel: newPicker(d)}
		for _, form := range d.names {
			var p phrase
			for _, tok := range splitSpaces(form) {
				src := kinds[tok[0]]
				if src == nil {
					if err == nil {
						err = fmt.Errorf("text pool: unknown part of speech %q in %q", tok, form)
					}
					continue
				}
				// A token like "J," puts its punctuation right after the word.
				p = append(p, table(src, tok[1:]+" "))
			}
			ps.forms = append(ps.forms, p)
		}
		return ps
	}
	g.np = phrases(ds.np, map[byte]*dist{'A': ds.articles, 'J': ds.adjectives, 'D': ds.adverbs, 'N': ds.nouns})
	g.vp = phrases(ds.vp, map[byte]*dist{'D': ds.adverbs, 'V': ds.verbs, 'X': ds.auxiliaries})
	g.preps = table(ds.prepositions, " the ")
	g.terms = table(ds.terminators, " ")
	g.grammar = grammarSet{sel: newPicker(ds.grammar)}
	for _, form := range ds.grammar.names {
		var parts []int
		for _, tok := range splitSpaces(form) {
			switch tok[0] {
			case 'N':
				parts = append(parts, partNP)
			case 'V':
				parts = append(parts, partVP)
			case 'P':
				parts = append(parts, partPrep)
			case 'T':
				parts = append(parts, partTerm)
			default:
				if err == nil {
					err = fmt.Errorf("text pool: unknown sentence part %q in %q", tok, form)
				}
			}
			if len(tok) > 1 && err == nil {
				// dbgen would insert the extra character; dists.dss has none.
				err = fmt.Errorf("text pool: punctuation in sentence form %q is not supported", form)
			}
		}
		g.grammar.forms = append(g.grammar.forms, parts)
	}
	return g, err
}

func splitSpaces(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	return out
}

// put stores w at p[0:] with three 8-byte writes; p needs 24 bytes of room.
func put(p []byte, w *word) {
	_ = p[23]
	binary.LittleEndian.PutUint64(p[0:], binary.LittleEndian.Uint64(w.b[0:]))
	binary.LittleEndian.PutUint64(p[8:], binary.LittleEndian.Uint64(w.b[8:]))
	binary.LittleEndian.PutUint64(p[16:], binary.LittleEndian.Uint64(w.b[16:]))
}

// fillRand writes the next len(dst) values of a stream whose current state
// is seed and returns the new state. Four interleaved chains (each stepping
// by 16807^4) keep the multiply-reduce latency off the critical path.
func fillRand(dst []uint32, seed int64) int64 {
	i := 0
	for ; i < len(dst) && i < 4; i++ {
		seed = mulMod(seed, rngMult)
		dst[i] = uint32(seed)
	}
	const a4 = 16807 * 16807 % rngMod * 16807 % rngMod * 16807 % rngMod
	for ; i < len(dst); i++ {
		dst[i] = uint32(mulMod(int64(dst[i-4]), a4))
	}
	if len(dst) > 0 {
		seed = int64(dst[len(dst)-1])
	}
	return seed
}

// maxSentenceDraws bounds the draws one sentence takes (dbgen's RNG_PER_SENT).
const maxSentenceDraws = 27

// decoder turns the text stream into sentences. It keeps a buffer of
// upcoming draws and knows the absolute index of the next one, so it can
// start anywhere in the stream.
type decoder struct {
	g    *textGrammar
	rv   [1024]uint32
	k, n int   // next and end index into rv
	base int64 // draw index of rv[0]
	seed int64 // stream state after rv[n-1]
}

// newDecoder starts at draw index at (0 is the stream's first draw).
func newDecoder(g *textGrammar, at int64) *decoder {
	return &decoder{g: g, base: at, seed: mulMod(seeds[sdText].value, powMod(at))}
}

// next returns the draw index of the next sentence.
func (d *decoder) next() int64 { return d.base + int64(d.k) }

// sentence writes one sentence and its trailing space at buf[pos:] and
// returns the position after it. Sentences are separated by one space, the
// terminator replacing the space after the sentence's last word, exactly
// as dbgen lays out its pool. buf needs poolSlack bytes of room.
func (d *decoder) sentence(buf []byte, pos int) int {
	if d.k > d.n-maxSentenceDraws {
		m := copy(d.rv[:], d.rv[d.k:d.n])
		d.base += int64(d.k)
		d.seed = fillRand(d.rv[m:], d.seed)
		d.k, d.n = 0, len(d.rv)
	}
	g, rv, k := d.g, &d.rv, d.k
	form := g.grammar.forms[g.grammar.sel.index(rv[k])]
	k++
	for _, part := range form {
		var p phrase
		switch part {
		case partNP:
			p = g.np.forms[g.np.sel.index(rv[k])]
			k++
		case partVP:
			p = g.vp.forms[g.vp.sel.index(rv[k])]
			k++
		case partPrep:
			w := &g.preps.words[g.preps.sel.index(rv[k])]
			k++
			put(buf[pos:], w)
			pos += w.n
			p = g.np.forms[g.np.sel.index(rv[k])]
			k++
		case partTerm:
			w := &g.terms.words[g.terms.sel.index(rv[k])]
			k++
			put(buf[pos-1:], w)
			pos += w.n - 1
		}
		for _, t := range p {
			w := &t.words[t.sel.index(rv[k])]
			k++
			put(buf[pos:], w)
			pos += w.n
		}
	}
	d.k = k
	return pos
}

// fillText writes the text stream from its start into buf until n bytes
// are written: dbgen's pool, built sequentially.
func fillText(g *textGrammar, buf []byte, n int) {
	d := newDecoder(g, 0)
	for pos := 0; pos < n; {
		pos = d.sentence(buf, pos)
	}
}

var (
	poolOnce sync.Once
	poolVal  *textPool
	poolErr  error
)

// loadTextPool returns the shared, read-only text pool, building it on first use.
func loadTextPool() (*textPool, error) {
	poolOnce.Do(func() {
		ds, err := loadDists()
		if err != nil {
			poolErr = err
			return
		}
		g, err := compileGrammar(ds)
		if err != nil {
			poolErr = err
			return
		}
		cache := textPoolCache()
		if cache != "" {
			if p, err := readPoolFile(cache, g); err == nil {
				poolVal = p
				return
			}
		}
		poolVal, poolErr = buildTextPool(g, runtime.GOMAXPROCS(0))
		if poolErr == nil && cache != "" {
			// A cache that cannot be written only costs later processes time.
			_ = writePoolFile(cache, poolVal)
		}
	})
	return poolVal, poolErr
}
