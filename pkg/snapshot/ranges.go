// Splitting a table into ctid page ranges that parallel readers pull.

package snapshot

import "fmt"

// pageRange is the heap pages [From, To) of one table; To < 0 means open
// ended (every page from From on), so that pages added after the size was
// measured are still read.
type pageRange struct {
	Table    int // index into the run's tables
	From, To int64
}

// open reports whether the range has no upper bound.
func (r pageRange) open() bool { return r.To < 0 }

// where is the range's predicate. PostgreSQL (14+) runs it as a TID range
// scan that reads only those pages.
func (r pageRange) where() string {
	if r.From == 0 && r.open() {
		return ""
	}
	lo := fmt.Sprintf("ctid >= '(%d,0)'::tid", r.From)
	if r.open() {
		return " WHERE " + lo
	}
	return fmt.Sprintf(" WHERE %s AND ctid < '(%d,0)'::tid", lo, r.To)
}

// pagesIn is the number of pages of a table of size pages that the range
// covers, for progress.
func (r pageRange) pagesIn(pages int64) int64 {
	to := r.To
	if r.open() || to > pages {
		to = pages
	}
	return max(0, to-r.From)
}

// splitPages cuts pages into ranges of per pages (per >= 1); the last range
// is open ended. An empty table is one open range.
func splitPages(table int, pages, per int64) []pageRange {
	per = max(1, per)
	var out []pageRange
	for from := int64(0); ; from += per {
		if from+per >= pages {
			return append(out, pageRange{Table: table, From: from, To: -1})
		}
		out = append(out, pageRange{Table: table, From: from, To: from + per})
	}
}

// rangePages is the automatic range size: about four ranges per reader over
// all pages, so that readers finish close together, but at least minPages
// so that tiny ranges do not cost more in round trips than they read. A
// single reader gains nothing from ranges and each costs a TID range scan
// where a whole table is a plain COPY, so it gets whole tables.
func rangePages(totalPages int64, readers int) int64 {
	const minPages = 64
	if readers <= 1 {
		return max(minPages, totalPages+1)
	}
	return max(minPages, totalPages/int64(4*max(1, readers)))
}
