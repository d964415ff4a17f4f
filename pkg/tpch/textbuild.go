// Building the text pool on several cores while keeping dbgen's exact bytes.

package tpch

import (
	"fmt"
	"sort"
	"sync"
	"unsafe"
)

// textPool is dbgen's 300 MiB text pool, possibly stored as segments with
// small gaps between them (see buildTextPool). Logical offsets are what
// dbgen draws; phys maps them to buf.
type textPool struct {
	buf []byte
	// For segment i >= 1: its first logical offset and how much further
	// its bytes sit in buf than the previous segment's.
	starts, deltas []int64
}

// phys maps a logical pool offset to its index in buf.
func (p *textPool) phys(off int64) int64 {
	ph := off
	for i, s := range p.starts {
		// branch-free "if off >= s { ph += delta }"
		ph += ^((off - s) >> 63) & p.deltas[i]
	}
	return ph
}

// slice returns the n pool bytes at logical offset off.
func (p *textPool) slice(off, n int64) []byte {
	ph := p.phys(off)
	return p.buf[ph : ph+n]
}

// addr returns the memory address of logical offset off (for prefetching).
func (p *textPool) addr(off int64) uintptr {
	return uintptr(unsafe.Pointer(unsafe.SliceData(p.buf))) + uintptr(p.phys(off))
}

const (
	// segGap separates the segments' guessed positions in buf; it only
	// needs to exceed the error of the guess (well under 1 MiB).
	segGap = 16 << 20
	// syncStarts is how many sentence starts a worker records for its
	// predecessor to meet; coupling takes a few dozen.
	syncStarts = 8192
	// bridge is copied after each segment so a comment straddling two
	// segments reads contiguous bytes; comments are at most 198 long.
	bridge = 256
)

// buildTextPool generates the pool with up to workers goroutines.
//
// The pool is one sequential random stream cut into sentences, and where a
// sentence starts depends on everything before it, so the stream cannot be
// split at a known point. But sentence boundaries couple: a decoder started
// at an arbitrary draw produces a few wrong sentences and then, once one of
// its sentence starts coincides with a true one, exactly the true text.
// Worker w starts at draw w/W of the stream (the stream itself is jumped
// to with skip-ahead) and records its first sentence starts; worker w-1
// runs until it reaches one of those starts, which is then a true one.
// The segments are written at guessed places in one buffer and left there;
// phys accounts for the offsets. If anything unexpected happens (no
// coupling, a guess too far off) the pool is rebuilt sequentially, so the
// bytes are dbgen's either way.
func buildTextPool(g *textGrammar, workers int) (*textPool, error) {
	workers = max(1, min(workers, 8))
	per := textPoolSize / workers
	size := (workers-1)*(per+segGap) + per + segGap + poolSlack
	if workers == 1 {
		size = textPoolSize + poolSlack
	}
	buf, err := allocPool(size)
	if err != nil {
		return nil, fmt.Errorf("text pool: %w", err)
	}
	if workers == 1 {
		fillText(g, buf, textPoolSize)
		return &textPool{buf: buf[:textPoolSize:textPoolSize]}, nil
	}
	if p, ok := buildParallel(g, buf, workers, per); ok {
		return p, nil
	}
	fillText(g, buf, textPoolSize)
	return &textPool{buf: buf[:textPoolSize:textPoolSize]}, nil
}

// sentenceStart is a sentence's draw index and where a worker wrote it.
type sentenceStart struct {
	draw int64
	pos  int
}

type segment struct {
	firstDraw int64           // draw the worker started at
	physStart int             // where it started writing
	starts    []sentenceStart // its first sentence starts
	ready     chan struct{}   // closed once starts is filled
	stopDraw  int64           // the successor's start it met
	stopPos   int             // where it stopped writing
	dec       *decoder        // the last worker continues with it
	ok        bool
}

func buildParallel(g *textGrammar, buf []byte, workers, per int) (*textPool, bool) {
	// Bytes per draw, estimated from a sample, place the split points.
	sample := make([]byte, 1<<20+poolSlack)
	d := newDecoder(g, 0)
	pos := 0
	for pos < 1<<20 {
		pos = d.sentence(sample, pos)
	}
	perDraw := float64(pos) / float64(d.next())
	drawsPer := int64(float64(per) / perDraw)

	segs := make([]*segment, workers)
	for w := range segs {
		segs[w] = &segment{firstDraw: int64(w) * drawsPer, physStart: w * (per + segGap), ready: make(chan struct{})}
	}
	var wg sync.WaitGroup
	for w := range segs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := segs[w]
			dec := newDecoder(g, s.firstDraw)
			pos := s.physStart
			if w > 0 {
				s.starts = make([]sentenceStart, 0, syncStarts)
				for len(s.starts) < syncStarts {
					s.starts = append(s.starts, sentenceStart{dec.next(), pos})
					pos = dec.sentence(buf, pos)
				}
			}
			close(s.ready)
			if w == len(segs)-1 {
				// The last worker writes its share and a little more;
				// assembly extends it if the guess fell short.
				for pos < s.physStart+per+segGap/4 {
					pos = dec.sentence(buf, pos)
				}
				s.stopPos, s.dec, s.ok = pos, dec, true
				return
			}
			next := segs[w+1]
			limit := next.physStart - bridge - poolSlack
			<-next.ready
			j := 0
			for pos < limit {
				at := dec.next()
				if at >= next.firstDraw {
					for j < len(next.starts) && next.starts[j].draw < at {
						j++
					}
					if j == len(next.starts) {
						return // no coupling: fall back
					}
					if next.starts[j].draw == at {
						s.stopDraw, s.stopPos, s.ok = at, pos, true
						return
					}
				}
				pos = dec.sentence(buf, pos)
			}
		}()
	}
	wg.Wait()
	p := &textPool{buf: buf}
	logical := int64(0)
	for w, s := range segs {
		if !s.ok {
			return nil, false
		}
		if w == 0 {
			logical = int64(s.stopPos)
			continue
		}
		prev := segs[w-1]
		i := sort.Search(len(s.starts), func(i int) bool { return s.starts[i].draw >= prev.stopDraw })
		if i == len(s.starts) || s.starts[i].draw != prev.stopDraw {
			return nil, false
		}
		b := s.starts[i].pos
		copy(buf[prev.stopPos:prev.stopPos+bridge], buf[b:b+bridge])
		p.starts = append(p.starts, logical)
		p.deltas = append(p.deltas, int64(b)-logical-(p.shift()))
		if w < len(segs)-1 {
			logical += int64(s.stopPos - b)
			continue
		}
		// Extend the last segment to the pool's end if needed.
		end := b + int(textPoolSize-logical)
		pos := s.stopPos
		for pos < end {
			if pos+maxSentenceBytes >= len(buf) {
				return nil, false
			}
			pos = s.dec.sentence(buf, pos)
		}
	}
	return p, true
}

// shift is the total physical displacement of the last segment so far.
func (p *textPool) shift() int64 {
	var t int64
	for _, d := range p.deltas {
		t += d
	}
	return t
}

// maxSentenceBytes bounds one sentence with its slack writes.
const maxSentenceBytes = 512
