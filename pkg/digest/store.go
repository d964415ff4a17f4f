// Per-shape statistics: a bounded, concurrency-safe store keyed by fingerprint, pool and route.

package digest

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// DefaultMaxShapes is the number of shapes a Store keeps when NewStore is
// given 0 or less.
const DefaultMaxShapes = 5000

// MaxTextBytes bounds the normalized text a Store keeps per shape; longer
// texts are cut at a UTF-8 boundary and flagged (the fingerprint still
// covers the whole text). It bounds the store's memory at about
// MaxTextBytes+1 KiB per shape even when clients send megabyte statements.
const MaxTextBytes = 4096

// Store accumulates statistics per (fingerprint, pool, route). It keeps at
// most its maximum number of shapes and evicts the least recently seen one
// to make room. Its methods are safe for concurrent use.
//
// Statements are normalized outside the lock; under it an Observe does a
// map lookup, a list move and the updates, and allocates only when a new
// shape arrives (its text; the entry of an evicted shape is reused).
// A statement without constants is normalized once and then found by its
// exact text (a driver's parameterized statements repeat byte for byte).
type Store struct {
	max int
	now func() time.Time // time.Now; tests replace it

	mu      sync.Mutex
	m       map[key]*entry
	lru     entry // sentinel of the recency list: lru.next is the most recent
	evicted uint64
	// evictedTotal is evicted without the resets: a Prometheus counter
	// must never go down.
	evictedTotal uint64
	since        time.Time

	// texts keeps the normalization of statements without constants by
	// their exact text (string to *normalized): a driver sends the same
	// parameterized statement again and again, and a repeat then costs a
	// lock-free lookup instead of a scan. Texts with constants are rarely
	// repeated and are not kept. textBytes bounds it; when full it is
	// emptied and filled again.
	texts     sync.Map
	textBytes atomic.Int64
}

// normalized is a cached normalization: the fingerprint and the text.
type normalized struct {
	fp   uint64
	text []byte
}

// Bounds of a Store's text cache: statements longer than maxCachedSQL
// are not kept, and the cache holds about maxCacheBytes of text.
const (
	maxCachedSQL  = 4096
	maxCacheBytes = 1 << 20
)

type key struct {
	fp          uint64
	pool, route string
}

type entry struct {
	key
	text       string
	truncated  bool
	prev, next *entry

	calls, errors uint64
	rows          int64
	total         time.Duration
	min, max      time.Duration
	first, last   time.Time
	h             hist
}

// NewStore returns a store keeping at most maxShapes shapes
// (DefaultMaxShapes when maxShapes <= 0).
func NewStore(maxShapes int) *Store {
	if maxShapes <= 0 {
		maxShapes = DefaultMaxShapes
	}
	s := &Store{max: maxShapes, now: time.Now}
	s.resetLocked()
	return s
}

func (s *Store) resetLocked() {
	s.m = make(map[key]*entry)
	s.lru.prev, s.lru.next = &s.lru, &s.lru
	s.evicted = 0
	s.since = s.now()
}

// Reset forgets every shape.
func (s *Store) Reset() {
	s.mu.Lock()
	s.resetLocked()
	s.mu.Unlock()
}

// Len returns the number of shapes held.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// Observe records one execution of sql on pool and route that took dur and
// returned or affected rows rows. sqlstate is the error's SQLSTATE, or ""
// (or a class 00, 01 or 02 code) when the statement succeeded.
func (s *Store) Observe(pool, route, sql string, dur time.Duration, rows int64, sqlstate string) {
	if v, ok := s.texts.Load(sql); ok {
		c := v.(*normalized)
		s.observe(c.fp, c.text, pool, route, dur, rows, IsError(sqlstate))
		return
	}
	b := getBuf()
	text, fp, literals := appendShape((*b)[:0], sql)
	s.observe(fp, text, pool, route, dur, rows, IsError(sqlstate))
	if !literals && len(sql) <= maxCachedSQL {
		s.cache(sql, fp, text)
	}
	putBuf(b, text)
}

// cache keeps the normalization of sql, copying both texts so that
// neither the caller's message buffer nor the pooled output is retained.
func (s *Store) cache(sql string, fp uint64, text []byte) {
	size := int64(len(sql) + len(text) + 64) // and the map's own overhead, roughly
	if s.textBytes.Add(size) > maxCacheBytes {
		s.texts.Clear()
		s.textBytes.Store(size)
	}
	s.texts.Store(strings.Clone(sql), &normalized{fp: fp, text: bytes.Clone(text)})
}

// ObserveNormalized is Observe for a statement already normalized by Append
// or Normalize: text is its normalized text and fp its fingerprint.
func (s *Store) ObserveNormalized(fp uint64, text []byte, pool, route string, dur time.Duration, rows int64, sqlstate string) {
	s.observe(fp, text, pool, route, dur, rows, IsError(sqlstate))
}

// IsError reports whether sqlstate is an error: not empty and not of class
// 00 (success), 01 (warning) or 02 (no data).
func IsError(sqlstate string) bool {
	if len(sqlstate) < 2 {
		return false
	}
	return !(sqlstate[0] == '0' && (sqlstate[1] == '0' || sqlstate[1] == '1' || sqlstate[1] == '2'))
}

func (s *Store) observe(fp uint64, text []byte, pool, route string, dur time.Duration, rows int64, isErr bool) {
	now := s.now()
	k := key{fp, pool, route}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.m[k]
	if e == nil {
		e = s.insertLocked(k, text, now)
	} else if s.lru.next != e {
		e.unlink()
		s.pushFront(e)
	}
	if e.calls == 0 || dur < e.min {
		e.min = dur
	}
	if dur > e.max {
		e.max = dur
	}
	e.calls++
	e.total += dur
	e.rows += rows
	if isErr {
		e.errors++
	}
	if now.After(e.last) { // calls that read the clock earlier may lock later
		e.last = now
	}
	e.h.add(dur)
}

func (s *Store) insertLocked(k key, text []byte, now time.Time) *entry {
	var e *entry
	if len(s.m) >= s.max {
		e = s.lru.prev // least recently seen
		e.unlink()
		delete(s.m, e.key)
		s.evicted++
		s.evictedTotal++
		*e = entry{}
	} else {
		e = new(entry)
	}
	e.key = k
	if len(text) > MaxTextBytes {
		cut := MaxTextBytes
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text, e.truncated = text[:cut], true
	}
	e.text = string(text)
	e.first = now
	s.m[k] = e
	s.pushFront(e)
	return e
}

func (e *entry) unlink() {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (s *Store) pushFront(e *entry) {
	e.prev, e.next = &s.lru, s.lru.next
	s.lru.next.prev = e
	s.lru.next = e
}

// Shape is one shape's statistics as Snapshot reports them. Durations are
// in nanoseconds. P50 and P99 come from a histogram and are within 6.25 %
// of the true nearest-rank percentile between 1 µs and 18 minutes (see
// the package documentation); Warnings says when they rest on few calls.
type Shape struct {
	Fingerprint string    `json:"fingerprint"` // 16 hex digits
	Pool        string    `json:"pool"`
	Route       string    `json:"route"`
	Query       string    `json:"query"`
	Truncated   bool      `json:"query_truncated,omitempty"` // Query is the first MaxTextBytes of the text
	Calls       uint64    `json:"calls"`
	Errors      uint64    `json:"errors"`
	Rows        int64     `json:"rows"`
	TotalNs     int64     `json:"total_ns"`
	MeanNs      int64     `json:"mean_ns"`
	MinNs       int64     `json:"min_ns"`
	MaxNs       int64     `json:"max_ns"`
	P50Ns       int64     `json:"p50_ns"`
	P99Ns       int64     `json:"p99_ns"`
	FirstSeen   time.Time `json:"first_seen"`
	LastSeen    time.Time `json:"last_seen"`
	Warnings    []string  `json:"warnings,omitempty"`
}

// Calls below which a percentile is flagged: p99 needs 100 calls for its
// rank to differ from the maximum.
const (
	warnP50Calls = 10
	warnP99Calls = 100
)

// Summary is a Store's bookkeeping next to its shapes.
type Summary struct {
	Shapes    int       `json:"shapes"`
	MaxShapes int       `json:"max_shapes"`
	Evicted   uint64    `json:"evicted"` // shapes evicted since the last reset
	Since     time.Time `json:"since"`   // the last reset, or the store's creation
	// EvictedTotal counts evictions since the store was made, resets
	// included (sqp_digest_evictions_total).
	EvictedTotal uint64 `json:"evicted_total"`
}

// Summary returns the store's summary.
func (s *Store) Summary() Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.summaryLocked()
}

func (s *Store) summaryLocked() Summary {
	return Summary{Shapes: len(s.m), MaxShapes: s.max, Evicted: s.evicted, Since: s.since, EvictedTotal: s.evictedTotal}
}

// Snapshot returns every shape sorted by total time, largest first (ties by
// calls, then fingerprint), and the store's summary.
func (s *Store) Snapshot() ([]Shape, Summary) {
	s.mu.Lock()
	out := make([]Shape, 0, len(s.m))
	for e := s.lru.next; e != &s.lru; e = e.next {
		out = append(out, e.shape())
	}
	sum := s.summaryLocked()
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b Shape) int {
		if c := cmp.Compare(b.TotalNs, a.TotalNs); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Calls, a.Calls); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Fingerprint, b.Fingerprint), cmp.Compare(a.Pool, b.Pool), cmp.Compare(a.Route, b.Route))
	})
	return out, sum
}

func (e *entry) shape() Shape {
	sh := Shape{
		Fingerprint: hex16(e.fp),
		Pool:        e.pool,
		Route:       e.route,
		Query:       e.text,
		Truncated:   e.truncated,
		Calls:       e.calls,
		Errors:      e.errors,
		Rows:        e.rows,
		TotalNs:     int64(e.total),
		MinNs:       int64(e.min),
		MaxNs:       int64(e.max),
		P50Ns:       int64(e.h.quantile(0.5, e.calls, e.min, e.max)),
		P99Ns:       int64(e.h.quantile(0.99, e.calls, e.min, e.max)),
		FirstSeen:   e.first,
		LastSeen:    e.last,
	}
	if e.calls > 0 {
		sh.MeanNs = int64(e.total) / int64(e.calls)
	}
	switch {
	case e.calls < warnP50Calls:
		sh.Warnings = []string{"fewer than 10 calls: p50 and p99 are unreliable"}
	case e.calls < warnP99Calls:
		sh.Warnings = []string{"fewer than 100 calls: p99 is the maximum"}
	}
	return sh
}

func hex16(v uint64) string { return fmt.Sprintf("%016x", v) }
