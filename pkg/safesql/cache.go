// Result cache: remembers verdicts by exact SQL text.

package safesql

import lru "github.com/hashicorp/golang-lru/v2"

// maxCachedLen is the longest text the cache keeps. Keys are the texts
// themselves, so this bounds the cache's memory at CacheSize × 8 KiB
// (32 MiB at the default size); longer texts are validated every time.
const maxCachedLen = 8 << 10

// verdict is one cached result.
type verdict struct {
	kind Kind
	err  *Refusal
}

// cache is a bounded LRU of verdicts, safe for concurrent use. A nil
// *cache caches nothing.
type cache struct {
	lru *lru.Cache[string, verdict]
}

func newCache(size int) (*cache, error) {
	if size < 0 {
		return nil, nil
	}
	l, err := lru.New[string, verdict](size)
	if err != nil {
		return nil, err
	}
	return &cache{lru: l}, nil
}

func (c *cache) get(sql string) (verdict, bool) {
	if c == nil {
		return verdict{}, false
	}
	return c.lru.Get(sql)
}

func (c *cache) put(sql string, v verdict) {
	if c == nil || len(sql) > maxCachedLen {
		return
	}
	c.lru.Add(sql, v)
}
