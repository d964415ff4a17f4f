// Readers: each streams COPY BINARY of ctid ranges through the decoder.

package snapshot

import (
	"context"
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
// bounds the memory in flight). It reads the COPY streams off conn's socket
// itself (rawConn); conn is idle again when it returns nil, and closed when
// a range failed.
func readLoop(ctx context.Context, conn *pgx.Conn, tables []*table, stats []*tableStats, batchRows int,
	queue <-chan pageRange, out chan<- item, free chan *copybin.Batch) error {
	rc, err := newRawConn(ctx, conn.PgConn())
	if err != nil {
		return fmt.Errorf("reader connection: %w", err)
	}
	for rg := range queue {
		if err := readRange(ctx, rc, tables[rg.Table], rg, stats[rg.Table], batchRows, out, free); err != nil {
			return err
		}
	}
	return nil
}

// copySQL is the COPY statement for one range of t. A whole plain table of
// plain columns is COPY table (cols): PostgreSQL then streams the heap
// without running a query plan, which is the fastest way out. Either form
// copies the table's own rows, not its inheritance children's (ONLY), as
// COPY table TO does.
func copySQL(t *table, rg pageRange) string {
	cols := make([]string, len(t.Cols))
	plain := rg.where() == "" && t.heapCopy
	for i, c := range t.Cols {
		cols[i] = c.SelectExpr()
		plain = plain && !c.AsText
	}
	if plain {
		return fmt.Sprintf("COPY %s (%s) TO STDOUT (FORMAT binary)", t.pgIdent(), strings.Join(cols, ", "))
	}
	return fmt.Sprintf("COPY (SELECT %s FROM ONLY %s%s) TO STDOUT (FORMAT binary)", strings.Join(cols, ", "), t.pgIdent(), rg.where())
}

// readRange copies one range: the decoder reads the COPY data straight
// from rc's socket buffer, in large blocks, with no goroutine in between.
func readRange(ctx context.Context, rc *rawConn, t *table, rg pageRange, st *tableStats, batchRows int,
	out chan<- item, free chan *copybin.Batch) error {
	st.rangeStarted(time.Now())
	stop := rc.watch(ctx)
	var rows int64
	err := rc.start(copySQL(t, rg))
	if err == nil {
		rows, err = decodeRange(ctx, &countingReader{r: rc, n: &st.bytes}, t, rg, batchRows, out, free)
		if err == nil {
			err = rc.drain()
		}
		if err == nil && rc.rows >= 0 && rc.rows != rows {
			err = fmt.Errorf("PostgreSQL sent %d rows, decoded %d", rc.rows, rows)
		}
	}
	if !stop() && err == nil {
		err = ctx.Err() // cancelled as the range ended: the socket's deadline is set
	}
	if err == nil {
		st.rangeDone(rg.pagesIn(t.Pages), time.Now())
		return nil
	}
	rc.close() // also stops the server's COPY if the decoder gave up first
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("copy %s pages %s: %w", t, rangeText(rg), ctx.Err())
	case rc.err != nil:
		return fmt.Errorf("copy %s pages %s: %w", t, rangeText(rg), rc.err)
	}
	return fmt.Errorf("read %s pages %s: %w", t, rangeText(rg), err)
}

// decodeRange decodes the stream into batches and sends them to out; it
// returns the rows decoded.
func decodeRange(ctx context.Context, r io.Reader, t *table, rg pageRange, batchRows int,
	out chan<- item, free chan *copybin.Batch) (int64, error) {
	dec, err := copybin.NewDecoder(r, t.Cols)
	if err != nil {
		return 0, err
	}
	dec.Table = t.String()
	for {
		var b *copybin.Batch
		select {
		case <-ctx.Done():
			return dec.Rows(), ctx.Err()
		case b = <-free:
		}
		n, err := dec.Next(b, batchRows)
		if err == io.EOF || (err == nil && n == 0) {
			free <- b
			return dec.Rows(), nil
		}
		if err != nil {
			free <- b
			return dec.Rows(), err
		}
		select {
		case <-ctx.Done():
			free <- b
			return dec.Rows(), ctx.Err()
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
