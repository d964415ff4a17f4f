// The server path: mcpg's executor in-process over a real pool, with its
// own timing segments. Open builds a new pool, so the first call is cold.

package run

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/qpkit/qpkit/pkg/pgexec"
	"github.com/qpkit/qpkit/pkg/safesql"
)

type serverPath struct {
	s    Settings
	pool *pgxpool.Pool
	ex   *pgexec.Executor
	buf  []byte
}

func (p *serverPath) Name() string { return "server" }

func (p *serverPath) Open(ctx context.Context) error {
	return p.openPool(ctx, 1)
}

// openPool opens a pool of conns connections, the sweep's budget.
func (p *serverPath) openPool(ctx context.Context, conns int) error {
	p.Close()
	pool, err := pgexec.NewPool(ctx, p.s.DatabaseURL, conns)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	// Open every connection now, as native opens its own before the clock
	// starts; the pool would otherwise open them during the first calls.
	held := make([]*pgxpool.Conn, 0, conns)
	for range conns {
		c, err := pool.Acquire(ctx)
		if err != nil {
			for _, c := range held {
				c.Release()
			}
			pool.Close()
			return fmt.Errorf("server: open connection %d of %d: %w", len(held)+1, conns, err)
		}
		held = append(held, c)
	}
	for _, c := range held {
		c.Release()
	}
	v, err := safesql.New(safesql.Options{})
	if err != nil {
		pool.Close()
		return fmt.Errorf("server: %w", err)
	}
	ex, err := pgexec.New(pool, v, pgexec.Options{MaxRows: p.s.MaxRows, MaxBytes: p.s.MaxBytes, StatementTimeout: p.s.Timeout})
	if err != nil {
		pool.Close()
		return fmt.Errorf("server: %w", err)
	}
	p.pool, p.ex = pool, ex
	return nil
}

func (p *serverPath) Call(ctx context.Context, sql string) (Result, error) {
	res, err := p.ex.Run(ctx, sql, nil, p.buf[:0])
	p.buf = res.JSON
	t := res.Timing
	return Result{Rows: res.Rows, Bytes: len(res.JSON), Timing: &t}, classify(ctx, err)
}

// call is Call for concurrent use: each goroutine brings its own buffer.
func (p *serverPath) call(ctx context.Context, sql string, buf []byte) (Result, []byte, error) {
	res, err := p.ex.Run(ctx, sql, nil, buf[:0])
	t := res.Timing
	return Result{Rows: res.Rows, Bytes: len(res.JSON), Timing: &t}, res.JSON, classify(ctx, err)
}

func (p *serverPath) Close() error {
	if p.pool != nil {
		p.pool.Close()
		p.pool, p.ex = nil, nil
	}
	return nil
}
