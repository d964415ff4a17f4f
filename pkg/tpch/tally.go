// Counting what a generator writes, for a progress display.

package tpch

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Tally sums what a generator reports through Options.Progress. Its
// methods are safe for concurrent use, so Line can be called while
// generation adds to it.
type Tally struct {
	table, rows, bytes atomic.Int64
}

// Add counts rows and bytes just written to table t; it fits
// Options.Progress.
func (c *Tally) Add(t Table, rows, bytes int64) {
	c.table.Store(int64(t))
	c.rows.Add(rows)
	c.bytes.Add(bytes)
}

// Line describes the tally elapsed into the run: the table being written,
// the rows and megabytes so far, the rate, and the elapsed seconds.
func (c *Tally) Line(elapsed time.Duration) string {
	el := elapsed.Seconds()
	mb := float64(c.bytes.Load()) / 1e6
	rate := 0.0
	if el > 0 {
		rate = mb / el
	}
	return fmt.Sprintf("%-8s %12d rows %10.1f MB %8.1f MB/s %7.1fs", Table(c.table.Load()), c.rows.Load(), mb, rate, el)
}
