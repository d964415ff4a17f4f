// The native path: the fair floor. One persistent pgx connection sends the
// same messages as the executor (its read-only envelope around the
// statement, in one write) and reads the replies, counting the rows without
// validating, decoding or serializing anything.

package run

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/qpkit/qpkit/pkg/pgexec"
)

// cancelGrace bounds the cancel request a call sends when its context
// ends, as pgexec's does.
const cancelGrace = time.Second

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
	if p.conn == nil || p.conn.IsClosed() {
		if err := p.Open(ctx); err != nil {
			return Result{}, err
		}
	}
	pc := p.conn.PgConn()
	fe := pc.Frontend()
	p.send(fe, sql)
	if err := fe.Flush(); err != nil {
		p.Close()
		return Result{}, classify(ctx, fmt.Errorf("native: send: %w", err))
	}
	res, err := p.read(ctx, pc)
	if err != nil {
		p.Close() // the connection's state is unknown; the next call reconnects
		return res.Result, classify(ctx, fmt.Errorf("native: %w", err))
	}
	return res.Result, classify(ctx, nativeErr(res.err))
}

// send queues the messages the executor sends, in its order (pgexec's
// protocol.go): P/B/E BEGIN, P/B/E SET LOCAL, P/B/D/E the statement
// without a row limit, Sync, P/B/E ROLLBACK, Sync.
func (p *nativePath) send(fe *pgproto3.Frontend, sql string) {
	simple := func(q string) {
		fe.SendParse(&pgproto3.Parse{Query: q})
		fe.SendBind(&pgproto3.Bind{})
		fe.SendExecute(&pgproto3.Execute{})
	}
	simple("BEGIN TRANSACTION READ ONLY")
	simple("SET LOCAL statement_timeout = " + strconv.FormatInt(p.s.Timeout.Milliseconds(), 10))
	fe.SendParse(&pgproto3.Parse{Query: sql})
	fe.SendBind(&pgproto3.Bind{})
	fe.SendDescribe(&pgproto3.Describe{ObjectType: 'P'})
	fe.SendExecute(&pgproto3.Execute{})
	fe.SendSync(&pgproto3.Sync{})
	simple("ROLLBACK")
	fe.SendSync(&pgproto3.Sync{})
}

// nativeResult is a Result and the first error the server reported.
type nativeResult struct {
	Result
	err error
}

// read reads every reply up to the second ReadyForQuery, counting the
// statement's rows and value bytes without decoding them. Like the
// executor, it reads without a context (pgconn would watch a cancellable
// one on every message) and watches ctx once: its end asks the server to
// cancel the statement (closing the connection alone leaves it running
// until it ends or times out) and then fails the read; the caller closes
// the connection, and the next call reopens it.
func (p *nativePath) read(ctx context.Context, pc *pgconn.PgConn) (nativeResult, error) {
	cancelled := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(cancelled)
		cctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
		_ = pc.CancelRequest(cctx)
		cancel()
		_ = pc.Conn().SetDeadline(time.Now())
	})
	res, err := receive(pc)
	if !stop() {
		// The cancel request is out (or gave up) and the deadline is set
		// once it returns: the connection is spent even if the reply
		// came to its end.
		<-cancelled
		if err == nil {
			err = fmt.Errorf("cancelled: %w", context.Cause(ctx))
		}
	}
	return res, err
}

// receive reads the replies of one call (see read).
func receive(pc *pgconn.PgConn) (nativeResult, error) {
	var res nativeResult
	for ready := 0; ready < 2; {
		msg, err := pc.ReceiveMessage(context.Background())
		if err != nil {
			return res, err
		}
		switch m := msg.(type) {
		case *pgproto3.DataRow:
			res.Rows++
			for _, v := range m.Values {
				res.Bytes += len(v)
			}
		case *pgproto3.ErrorResponse:
			if res.err == nil {
				res.err = pgconn.ErrorResponseToPgError(m)
			}
		case *pgproto3.ReadyForQuery:
			ready++
		}
	}
	return res, nil
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
