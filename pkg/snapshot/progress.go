// Per-table progress lines and summaries for Options.Progress.

package snapshot

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// tableStats is what the pipeline counts for one table; the counters are
// updated by readers and writers concurrently.
type tableStats struct {
	rows      atomic.Int64 // written to the copy
	bytes     atomic.Int64 // COPY BINARY bytes read from PostgreSQL
	pagesDone atomic.Int64 // pages of the ranges read completely
	rangesOut atomic.Int64 // ranges not yet read completely

	mu          sync.Mutex
	first, last time.Time // start of the first range, end of the last
}

// rangeStarted notes the start of a range's read.
func (s *tableStats) rangeStarted(now time.Time) {
	s.mu.Lock()
	if s.first.IsZero() {
		s.first = now
	}
	s.mu.Unlock()
}

// rangeDone notes that a range of pages pages was read completely.
func (s *tableStats) rangeDone(pages int64, now time.Time) {
	s.pagesDone.Add(pages)
	s.mu.Lock()
	if now.After(s.last) {
		s.last = now
	}
	s.mu.Unlock()
	s.rangesOut.Add(-1)
}

// duration is the time from the first range's start to the last range's end.
func (s *tableStats) duration() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first.IsZero() || s.last.Before(s.first) {
		return 0
	}
	return s.last.Sub(s.first)
}

// reporter writes progress lines for the tables that are being read, at
// most once per interval, to w.
type reporter struct {
	w      io.Writer
	every  time.Duration
	tables []*table
	stats  []*tableStats
}

// run writes progress until ctx is done.
func (r *reporter) run(ctx context.Context) {
	if r.w == nil {
		return
	}
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			r.tick(now)
		}
	}
}

// tick writes a line per table being read. Summaries wait for finish,
// when the writers have written every row.
func (r *reporter) tick(now time.Time) {
	for i, s := range r.stats {
		s.mu.Lock()
		first := s.first
		s.mu.Unlock()
		if first.IsZero() || s.rangesOut.Load() == 0 {
			continue
		}
		fmt.Fprintln(r.w, progressLine(r.tables[i], s, now.Sub(first)))
	}
}

// progressLine is "schema.table: rows, rows/s, pages done/total, ETA".
func progressLine(t *table, s *tableStats, elapsed time.Duration) string {
	rows, done := s.rows.Load(), s.pagesDone.Load()
	line := fmt.Sprintf("%s: %d rows, %s rows/s", t, rows, rate(rows, elapsed))
	if t.Pages > 0 {
		line += fmt.Sprintf(", %d/%d pages (%d%%)", done, t.Pages, 100*done/t.Pages)
		if done > 0 && done < t.Pages {
			eta := time.Duration(float64(elapsed) * float64(t.Pages-done) / float64(done))
			line += ", ETA " + eta.Round(time.Second).String()
		}
	}
	return line
}

// finish writes a summary line per table.
func (r *reporter) finish() {
	if r.w == nil {
		return
	}
	for i, s := range r.stats {
		d := s.duration()
		rows := s.rows.Load()
		fmt.Fprintf(r.w, "%s: done, %d rows, %.1f MB read, %s, %s rows/s\n",
			r.tables[i], rows, float64(s.bytes.Load())/1e6, d.Round(time.Millisecond), rate(rows, d))
	}
}

// rate formats rows per second compactly.
func rate(rows int64, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	v := float64(rows) / d.Seconds()
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
