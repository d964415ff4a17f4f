// The native path: the fair floor. One persistent pgx connection sends the
// same read-only envelope as the executor, pipelined in one round trip, and
// reads the rows without validating or serializing anything.

package run

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/qpkit/qpkit/pkg/pgexec"
)

type nativePath struct {
	s    Settings
	conn *pgx.Conn
}

func (p *nativePath) Name() string { return "native" }

func (p *nativePath) Open(ctx context.Context) error {
	p.Close()
	cfg, err := pgx.ParseConfig(p.s.DatabaseURL)
	if err != nil {
		return fmt.Errorf("native: %w", err)
	}
	// The executor's session settings, so both see the same server.
	pcfg, err := pgxpool.ParseConfig(p.s.DatabaseURL)
	if err != nil {
		return fmt.Errorf("native: %w", err)
	}
	pgexec.ConfigurePool(pcfg)
	cfg.RuntimeParams = pcfg.ConnConfig.RuntimeParams
	p.conn, err = pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("native: connect: %w", err)
	}
	return nil
}

func (p *nativePath) Call(ctx context.Context, sql string) (Result, error) {
	var res Result
	pc := p.conn.PgConn()
	pl := pc.StartPipeline(ctx)
	pl.SendQueryParams("BEGIN TRANSACTION READ ONLY", nil, nil, nil, nil)
	pl.SendQueryParams("SET LOCAL statement_timeout = "+strconv.FormatInt(p.s.Timeout.Milliseconds(), 10), nil, nil, nil, nil)
	pl.SendQueryParams(sql, nil, nil, nil, nil)
	pl.SendQueryParams("ROLLBACK", nil, nil, nil, nil)
	firstErr := pl.Sync()
	for i := 0; firstErr == nil; i++ {
		r, err := pl.GetResults()
		if err != nil {
			firstErr = err
			break
		}
		if r == nil {
			break
		}
		switch rr := r.(type) {
		case *pgconn.ResultReader:
			for rr.NextRow() {
				if i == 2 {
					res.Rows++
					for _, v := range rr.Values() {
						res.Bytes += len(v)
					}
				}
			}
			if _, err := rr.Close(); err != nil && firstErr == nil {
				firstErr = err
			}
		case *pgconn.PipelineSync:
		}
	}
	if err := pl.Close(); err != nil && firstErr == nil {
		firstErr = err
	}
	if firstErr != nil && pc.TxStatus() != 'I' {
		// An aborted envelope: end it so the next call starts clean.
		p.conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
	}
	return res, classify(ctx, nativeErr(firstErr))
}

// nativeErr marks the server's statement-timeout cancel as a timeout.
func nativeErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "57014" {
		return &pgexec.QueryError{SQLState: pe.Code, Message: pe.Message, TimedOut: true}
	}
	return err
}

func (p *nativePath) Close() error {
	if p.conn == nil {
		return nil
	}
	err := p.conn.Close(context.Background())
	p.conn = nil
	return err
}
