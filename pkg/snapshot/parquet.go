// The Parquet strategy: writers fill Parquet files, DuckDB loads them.

package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/qpkit/qpkit/pkg/duckload"
)

// parquetStrategy gives every (writer, table) pair its own Parquet file in
// a scratch directory; once all are written, DuckDB loads each table from
// its files (reading them in parallel itself). The files are removed by
// abort, after success or failure.
type parquetStrategy struct {
	dir   string
	db    *sql.DB
	index map[*table]int
	tabs  []*table

	mu    sync.Mutex
	files [][]string // per table
}

// newParquetStrategy makes the scratch directory inside scratch (or the
// target's directory when scratch is "").
func newParquetStrategy(scratch, target string, db *sql.DB, tables []*table) (writeStrategy, error) {
	if scratch == "" {
		scratch = filepath.Dir(target)
	}
	dir, err := os.MkdirTemp(scratch, "qpanalytics-parquet-")
	if err != nil {
		return nil, fmt.Errorf("parquet scratch directory: %w", err)
	}
	p := &parquetStrategy{dir: dir, db: db, index: map[*table]int{}, tabs: tables, files: make([][]string, len(tables))}
	for i, t := range tables {
		p.index[t] = i
	}
	return p, nil
}

func (p *parquetStrategy) open(_ context.Context, w int, t *table) (sink, error) {
	i := p.index[t]
	path := filepath.Join(p.dir, fmt.Sprintf("t%d-w%d.parquet", i, w))
	s, err := duckload.NewParquetSink(path, t.Cols)
	if err != nil {
		return nil, fmt.Errorf("parquet for %s: %w", t, err)
	}
	p.mu.Lock()
	p.files[i] = append(p.files[i], path)
	p.mu.Unlock()
	return s, nil
}

// finish loads every table's files into DuckDB.
func (p *parquetStrategy) finish(ctx context.Context) error {
	for i, t := range p.tabs {
		if len(p.files[i]) == 0 {
			continue
		}
		if err := duckload.LoadParquet(ctx, p.db, t.Schema, t.Name, p.files[i]); err != nil {
			return fmt.Errorf("load %s from parquet: %w", t, err)
		}
	}
	return nil
}

func (p *parquetStrategy) abort() { os.RemoveAll(p.dir) }
