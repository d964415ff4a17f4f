// Writers: goroutines that take decoded batches and hand them to sinks.

package snapshot

import (
	"context"
	"fmt"

	"github.com/qpkit/qpkit/pkg/copybin"
)

// sink receives one table's batches from one writer. Write must not keep
// the batch after it returns.
type sink interface {
	Write(b *copybin.Batch) error
	Close() error
}

// writeStrategy makes the sinks of a strategy and completes the load.
type writeStrategy interface {
	// open makes writer w's sink for table t.
	open(ctx context.Context, w int, t *table) (sink, error)
	// finish runs once every sink is closed without error.
	finish(ctx context.Context) error
	// abort releases whatever is left after a failure; it is safe to call
	// after finish.
	abort()
}

// item is one decoded batch of table Table on its way to a writer.
type item struct {
	Table int
	Batch *copybin.Batch
}

// writeLoop is writer w: it writes every batch from in to its sink for the
// batch's table (opening sinks on first use), returns each batch to free,
// and closes its sinks when in is closed.
func writeLoop(ctx context.Context, w int, strat writeStrategy, tables []*table, stats []*tableStats,
	in <-chan item, free chan<- *copybin.Batch) (err error) {
	sinks := map[int]sink{}
	defer func() {
		for i, s := range sinks {
			if cerr := s.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("writer %d: close %s: %w", w, tables[i], cerr)
			}
		}
	}()
	for {
		var it item
		var ok bool
		select {
		case <-ctx.Done():
			return ctx.Err()
		case it, ok = <-in:
		}
		if !ok {
			return nil
		}
		s := sinks[it.Table]
		if s == nil {
			if s, err = strat.open(ctx, w, tables[it.Table]); err != nil {
				return fmt.Errorf("writer %d: %w", w, err)
			}
			sinks[it.Table] = s
		}
		if err := s.Write(it.Batch); err != nil {
			return fmt.Errorf("writer %d: write %s: %w", w, tables[it.Table], err)
		}
		stats[it.Table].rows.Add(int64(it.Batch.Len))
		free <- it.Batch // never blocks: free holds every batch
	}
}
