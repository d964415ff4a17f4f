// A cache of translations: parsing and deparsing cost hundreds of
// microseconds (two cgo calls and protobuf copies each way), while
// dashboards and benchmarks send the same texts again and again.

package duckdialect

import (
	lru "github.com/hashicorp/golang-lru/v2"
)

// cacheSize bounds the cached statements; a few hundred kilobytes.
const cacheSize = 1024

// translation is a cached outcome, error included (translation depends on
// the text alone).
type translation struct {
	sql string
	err error
}

var cache = mustCache()

func mustCache() *lru.Cache[string, translation] {
	c, err := lru.New[string, translation](cacheSize)
	if err != nil {
		panic(err) // only for a non-positive size
	}
	return c
}

// cachedTranslate looks sql up before translating it.
func cachedTranslate(sql string) (string, error) {
	if t, ok := cache.Get(sql); ok {
		return t.sql, t.err
	}
	out, err := translate(sql)
	cache.Add(sql, translation{out, err})
	return out, err
}
