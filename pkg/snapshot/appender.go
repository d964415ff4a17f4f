// The appender strategy: batches go straight into DuckDB.

package snapshot

import (
	"context"
	"database/sql/driver"
	"fmt"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/qpkit/qpkit/pkg/duckload"
)

// appenderStrategy gives every (writer, table) pair its own DuckDB
// connection and appender, as duckload requires; DuckDB lets appenders on
// different connections add to one table at once.
type appenderStrategy struct {
	connector *duckdb.Connector

	mu    sync.Mutex
	conns []driver.Conn // open connections, closed by their sink or abort
}

// appenderSink closes the sink's connection after the sink.
type appenderSink struct {
	*duckload.AppenderSink
	strat *appenderStrategy
	conn  driver.Conn
}

func (s *appenderSink) Close() error {
	err := s.AppenderSink.Close()
	s.strat.release(s.conn)
	return err
}

func (a *appenderStrategy) open(ctx context.Context, w int, t *table) (sink, error) {
	dc, err := a.connector.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to duckdb: %w", err)
	}
	a.mu.Lock()
	a.conns = append(a.conns, dc)
	a.mu.Unlock()
	s, err := duckload.NewAppenderSink(dc, t.Schema, t.Name, t.Cols)
	if err != nil {
		a.release(dc)
		return nil, err
	}
	return &appenderSink{AppenderSink: s, strat: a, conn: dc}, nil
}

// release closes one connection and forgets it.
func (a *appenderStrategy) release(dc driver.Conn) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, c := range a.conns {
		if c == dc {
			a.conns = append(a.conns[:i], a.conns[i+1:]...)
			dc.Close()
			return
		}
	}
}

func (a *appenderStrategy) finish(context.Context) error { return nil }

func (a *appenderStrategy) abort() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.conns {
		c.Close()
	}
	a.conns = nil
}
