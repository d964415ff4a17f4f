// Plain-text listings of row counts and queries, as tpchgen prints them.

package tpch

import (
	"context"
	"fmt"
	"io"
)

// WriteRowCounts writes one line per table, "<table>\t<rows>", in load
// order: the rows dbgen writes at scale factor sf (see RowCount).
func WriteRowCounts(w io.Writer, sf float64) error {
	return WriteRowCountsContext(context.Background(), w, sf)
}

// WriteRowCountsContext is WriteRowCounts, stopping when ctx ends.
func WriteRowCountsContext(ctx context.Context, w io.Writer, sf float64) error {
	for _, t := range Tables {
		n, err := RowCountContext(ctx, t, sf)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s\t%d\n", t, n); err != nil {
			return err
		}
	}
	return nil
}

// WriteQueries writes the 22 queries in order, each preceded by a line
// "-- QN" (N = 1..22) and followed by an empty line, so a script can split
// the listing at lines matching ^-- Q[0-9]+$.
func WriteQueries(w io.Writer) error {
	for n := 1; n <= NumQueries; n++ {
		q, err := Query(n)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "-- Q%d\n%s\n\n", n, q); err != nil {
			return err
		}
	}
	return nil
}
