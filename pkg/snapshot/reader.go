// Readers: each streams COPY BINARY of ctid ranges through the decoder.

package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/copybin"
)

// readLoop is one reader: it pulls ranges until the queue is empty and
// sends each decoded batch to out, taking empty batches from free (which
// bounds the memory in flight).
func readLoop(ctx context.Context, conn *pgx.Conn, tables []*table, stats []*tableStats, batchRows int,
	queue <-chan pageRange, out chan<- item, free chan *copybin.Batch) error {
	for rg := range queue {
		if err := readRange(ctx, conn, tables[rg.Table], rg, stats[rg.Table], batchRows, out, free); err != nil {
			return err
		}
	}
	return nil
}

// copySQL is the COPY statement for one range of t. A whole table of
// plain columns is COPY table (cols): PostgreSQL then streams the heap
// without running a query plan, which is the fastest way out.
func copySQL(t *table, rg pageRange) string {
	cols := make([]string, len(t.Cols))
	plain := rg.where() == ""
	for i, c := range t.Cols {
		cols[i] = c.SelectExpr()
		plain = plain && !c.AsText
	}
	if plain {
		return fmt.Sprintf("COPY %s (%s) TO STDOUT (FORMAT binary)", t.pgIdent(), strings.Join(cols, ", "))
	}
	return fmt.Sprintf("COPY (SELECT %s FROM %s%s) TO STDOUT (FORMAT binary)", strings.Join(cols, ", "), t.pgIdent(), rg.where())
}

// readRange copies one range: CopyTo writes into a copybin.Pipe in its own
// goroutine while this one decodes from it. The pipe gathers CopyTo's
// per-row writes into large blocks, so the two goroutines meet once per
// block, not once per row.
func readRange(ctx context.Context, conn *pgx.Conn, t *table, rg pageRange, st *tableStats, batchRows int,
	out chan<- item, free chan *copybin.Batch) error {
	st.rangeStarted(time.Now())
	pipe := copybin.NewPipe()
	copyErr := make(chan error, 1)
	go func() {
		_, err := conn.PgConn().CopyTo(ctx, pipe, copySQL(t, rg))
		if cerr := pipe.CloseWrite(err); err == nil {
			err = cerr // the last block could not be handed over
		}
		copyErr <- err
	}()
	err := decodeRange(ctx, &countingReader{r: pipe, n: &st.bytes}, t, rg, batchRows, out, free)
	pipe.CloseRead(errDecodeStopped) // unblocks CopyTo if decoding stopped early
	cerr := <-copyErr
	if cerr != nil && !errors.Is(cerr, errDecodeStopped) {
		return fmt.Errorf("copy %s pages %s: %w", t, rangeText(rg), cerr)
	}
	if err != nil {
		return fmt.Errorf("read %s pages %s: %w", t, rangeText(rg), err)
	}
	st.rangeDone(rg.pagesIn(t.Pages), time.Now())
	return nil
}

// errDecodeStopped is what CopyTo sees when the decoder gave up first.
var errDecodeStopped = errors.New("decoder stopped")

// decodeRange decodes the stream into batches and sends them to out.
func decodeRange(ctx context.Context, r io.Reader, t *table, rg pageRange, batchRows int,
	out chan<- item, free chan *copybin.Batch) error {
	dec, err := copybin.NewDecoder(r, t.Cols)
	if err != nil {
		return err
	}
	dec.Table = t.String()
	for {
		var b *copybin.Batch
		select {
		case <-ctx.Done():
			return ctx.Err()
		case b = <-free:
		}
		n, err := dec.Next(b, batchRows)
		if err == io.EOF || (err == nil && n == 0) {
			free <- b
			return nil
		}
		if err != nil {
			free <- b
			return err
		}
		select {
		case <-ctx.Done():
			free <- b
			return ctx.Err()
		case out <- item{Table: rg.Table, Batch: b}:
		}
	}
}

// rangeText is "[from,to)" or "[from,...)" for messages.
func rangeText(rg pageRange) string {
	if rg.open() {
		return fmt.Sprintf("[%d,...)", rg.From)
	}
	return fmt.Sprintf("[%d,%d)", rg.From, rg.To)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
