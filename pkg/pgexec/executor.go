// The executor: validate, check out a connection, run the pipelined request, return the connection clean, serialize.

package pgexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Validator decides whether agent SQL may run; safesql.Validator implements
// it. Validate returns nil when the text may run, else an error that Run
// returns to its caller unchanged.
type Validator interface {
	Validate(sql string) error
}

// Options are the executor's limits. A zero field takes its default.
type Options struct {
	// MaxRows is the most rows a result holds (default 100). The executor
	// reads row MaxRows+1 to learn that the result is truncated, then asks
	// the server to cancel the rest (a row limit on Execute would also
	// stop it, but would rule out parallel plans).
	MaxRows int
	// MaxBytes caps the document (default 32 KiB). Rows that would
	// exceed it are left out and the result says truncated by "bytes".
	MaxBytes int
	// MaxValueBytes is the largest single value accepted (default 1 MiB).
	// A larger value fails the call with SQLSTATE 54000; see docs/pgexec.md.
	MaxValueBytes int
	// StatementTimeout is SET LOCAL statement_timeout inside the envelope
	// (default 30 s, at least 1 ms).
	StatementTimeout time.Duration
	// AcquireTimeout bounds the wait for a pool connection when every one
	// is busy (default 30 s, at least 1 ms); the call then fails with
	// *PoolBusyError instead of queueing for as long as the caller waits.
	AcquireTimeout time.Duration
	// Format is the document's format: FormatJSON (the zero value) or
	// FormatTSV. WithFormat gives the same executor in the other format.
	Format Format
}

// Format is a result document's format; docs/pgexec.md has both grammars.
type Format uint8

const (
	// FormatJSON: {"columns":[...],"rows":[[...]],"row_count":N,"truncated":false}.
	FormatJSON Format = iota
	// FormatTSV: a name:type header line, one line per row with each value
	// in PostgreSQL's text form escaped as COPY's text format does (bpchar
	// without its trailing pad), and a footer line "(N rows)".
	FormatTSV

	numFormats
)

// String returns "json" or "tsv".
func (f Format) String() string {
	switch f {
	case FormatJSON:
		return "json"
	case FormatTSV:
		return "tsv"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// Defaults for Options.
const (
	DefaultMaxRows          = 100
	DefaultMaxBytes         = 32 << 10
	DefaultMaxValueBytes    = 1 << 20
	DefaultStatementTimeout = 30 * time.Second
	DefaultAcquireTimeout   = 30 * time.Second

	maxMaxBytes = 256 << 20 // keeps row offsets within int32
)

// cancelGrace is how long a canceled call waits for the server to answer
// the cancel request before the connection's read deadline ends it.
const cancelGrace = time.Second

// watchdogSlack is how long past its statement_timeout a call waits for
// the server's own timeout before canceling the statement itself.
const watchdogSlack = time.Second

func (o Options) withDefaults() (Options, error) {
	if o.MaxRows == 0 {
		o.MaxRows = DefaultMaxRows
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxValueBytes == 0 {
		o.MaxValueBytes = DefaultMaxValueBytes
	}
	if o.StatementTimeout == 0 {
		o.StatementTimeout = DefaultStatementTimeout
	}
	if o.AcquireTimeout == 0 {
		o.AcquireTimeout = DefaultAcquireTimeout
	}
	switch {
	case o.MaxRows < 0 || o.MaxRows >= 1<<31:
		return o, fmt.Errorf("pgexec: MaxRows %d out of range", o.MaxRows)
	case o.MaxBytes < 2*trailerRoom || o.MaxBytes > maxMaxBytes:
		return o, fmt.Errorf("pgexec: MaxBytes %d out of range [%d, %d]", o.MaxBytes, 2*trailerRoom, maxMaxBytes)
	case o.MaxValueBytes < 0 || o.MaxValueBytes > maxMaxBytes:
		return o, fmt.Errorf("pgexec: MaxValueBytes %d out of range", o.MaxValueBytes)
	case o.StatementTimeout < time.Millisecond || o.StatementTimeout.Milliseconds() > 1<<31-1:
		return o, fmt.Errorf("pgexec: StatementTimeout %v out of range [1ms, 24.8 days]", o.StatementTimeout)
	case o.AcquireTimeout < time.Millisecond:
		return o, fmt.Errorf("pgexec: AcquireTimeout %v is under 1ms", o.AcquireTimeout)
	case o.Format >= numFormats:
		return o, fmt.Errorf("pgexec: unknown %v", o.Format)
	}
	return o, nil
}

// Executor runs validated statements read-only. It is safe for concurrent
// use; each call holds one pool connection while talking to the server.
type Executor struct {
	pool        *pgxpool.Pool
	validator   Validator
	opts        Options
	env         envelope
	baseMaxBody int // the connections' own message size limit, restored after each call
	// The executor in each format (WithFormat). They differ only in
	// opts.Format and share everything below.
	formats   *[numFormats]*Executor
	states    *sync.Pool
	destroyed *atomic.Int64
	lingering *lingerSet // the pool's connections waiting for a canceled statement's end
}

// Result is one call's outcome.
type Result struct {
	// Doc is dst with the document appended, in the executor's format.
	// FormatJSON:
	// {"columns":[{"name":"a","type":"int4"}],"rows":[[1]],"row_count":1,"truncated":false}
	// plus "truncated_by":"rows"|"bytes" when truncated. FormatTSV:
	// "a:int4\n1\n(1 rows)".
	Doc []byte
	// JSON is Doc with FormatJSON, nil with FormatTSV.
	JSON []byte
	// Columns may be shared with other calls' results (the same statement
	// run again): read it, never modify it.
	Columns     []Column
	Rows        int
	Truncated   bool
	TruncatedBy string // "rows", "bytes" or ""
	// Command is the statement's command tag ("SELECT 3", "SHOW"); empty
	// when a cap cut the result short.
	Command string
	Timing  Timing
}

// Column describes a result column.
type Column struct {
	Name string
	Type string // "int4", "text[]", or "oid:N" for types the serializer does not know
	OID  uint32
}

// New returns an executor that runs statements v accepts on pool's
// connections. Build the pool with NewPool (or ConfigurePool) for the
// session defaults it relies on.
func New(pool *pgxpool.Pool, v Validator, opts Options) (*Executor, error) {
	if pool == nil || v == nil {
		return nil, errors.New("pgexec: New needs a pool and a validator")
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return newExecutor(pool, v, opts, beginSQL, setTimeoutSQL(opts.StatementTimeout))
}

func newExecutor(pool *pgxpool.Pool, v Validator, opts Options, begin, setTimeout string) (*Executor, error) {
	env, err := newEnvelope(begin, setTimeout)
	if err != nil {
		return nil, fmt.Errorf("pgexec: encode envelope: %w", err)
	}
	e := &Executor{pool: pool, validator: v, opts: opts, env: env,
		formats: new([numFormats]*Executor), states: new(sync.Pool), destroyed: new(atomic.Int64),
		lingering: lingerFor(pool)}
	e.baseMaxBody = pool.Config().ConnConfig.MaxProtocolMessageBodyLen
	if e.baseMaxBody == 0 {
		e.baseMaxBody = 0x3fffffff - 1 // pgproto3's default: the server's own message limit
	}
	e.states.New = func() any { return new(callState) }
	for f := range numFormats {
		sibling := *e
		sibling.opts.Format = f
		e.formats[f] = &sibling
	}
	e.formats[opts.Format] = e
	return e, nil
}

// WithFormat returns the executor that writes documents in format f and is
// otherwise e: same pool, validator and limits, same DestroyedConns count.
// It allocates nothing; an unknown f gives e.
func (e *Executor) WithFormat(f Format) *Executor {
	if f >= numFormats {
		return e
	}
	return e.formats[f]
}

// DestroyedConns counts connections the executor (in any format) closed
// instead of returning to the pool (failed I/O, cancellation, a non-idle
// transaction state or a statement that may leave session state behind).
func (e *Executor) DestroyedConns() int64 { return e.destroyed.Load() }

// callState is the reusable memory of one call.
type callState struct {
	pbuf  []byte
	pvals [][]byte
	x     exchange
	cols  []Column // the last result's columns, shared with its caller
	wd    watchdog
}

// columns returns the columns of x's result: the slice of the call before
// when they are the same (a statement run again, the usual case), so that
// a call allocates nothing for them; callers get it read-only.
func (st *callState) columns(x *exchange) []Column {
	if st.cols != nil && len(st.cols) == len(x.cols) {
		same := true
		for i, c := range x.cols {
			k := &st.cols[i]
			if k.OID != c.oid || k.Type != c.typ.name || k.Name != string(x.names[c.nameOff:c.nameOff+c.nameLen]) {
				same = false
				break
			}
		}
		if same {
			return st.cols
		}
	}
	cols := make([]Column, len(x.cols))
	for i, c := range x.cols {
		cols[i] = Column{Name: string(x.names[c.nameOff : c.nameOff+c.nameLen]), Type: c.typ.name, OID: c.oid}
	}
	st.cols = cols
	return cols
}

// keepLimit: buffers larger than this are not kept for the next call.
const keepLimit = 16 << 20

func (e *Executor) putState(st *callState) {
	if cap(st.pbuf) > keepLimit || cap(st.x.ser.scratch) > keepLimit || cap(st.x.ser.elem) > keepLimit {
		return
	}
	st.x.doc = nil // the caller's buffer
	st.pvals = st.pvals[:0]
	st.pbuf = st.pbuf[:0]
	e.states.Put(st)
}

// Run validates sql, runs it with params bound to $1..$n inside the
// read-only envelope, and appends the result document to dst. Validator
// errors come back unchanged; server errors, timeouts, cancellations and
// limits as *QueryError; anything else means the connection failed.
func (e *Executor) Run(ctx context.Context, sql string, params []any, dst []byte) (res Result, err error) {
	return e.RunSkip(ctx, sql, params, 0, dst)
}

// MaxSkip is the most rows RunSkip can skip.
const MaxSkip = 1<<31 - 1

// RunSkip is Run that reads and drops the statement's first skip rows
// before the row limit applies: the result holds rows skip+1 to
// skip+MaxRows, and truncated_by "rows" means more follow. The statement
// text is not changed; the server produces the skipped rows, the client
// discards them (byte and value limits still apply to them as they arrive,
// except the document size, which counts only kept rows).
func (e *Executor) RunSkip(ctx context.Context, sql string, params []any, skip int, dst []byte) (res Result, err error) {
	res.setDoc(dst, e.opts.Format)
	if skip < 0 || skip > MaxSkip {
		return res, fmt.Errorf("pgexec: skip %d out of range 0..%d", skip, MaxSkip)
	}
	tStart := time.Now()
	err = e.validator.Validate(sql)
	defer func() { res.Timing.Total = time.Since(tStart) }()
	if err != nil {
		res.Timing.Parse = time.Since(tStart)
		return res, err
	}
	st := e.states.Get().(*callState)
	defer e.putState(st)
	if strings.IndexByte(sql, 0) >= 0 {
		// The Parse message ends the text at the first NUL; the server
		// would run less than what was validated.
		res.Timing.Parse = time.Since(tStart)
		return res, errors.New("pgexec: statement text contains a NUL byte")
	}
	st.pbuf, st.pvals, err = encodeParams(params, st.pbuf, st.pvals)
	tChecked := time.Now()
	res.Timing.Parse = tChecked.Sub(tStart)
	if err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, canceledError(err)
	}

	conn, err := e.acquire(ctx)
	tConn := time.Now()
	res.Timing.Pool = tConn.Sub(tChecked)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return res, canceledError(cerr)
		}
		var busy *PoolBusyError
		if errors.As(err, &busy) {
			return res, err
		}
		return res, fmt.Errorf("pgexec: acquire connection: %w", err)
	}

	x := &st.x
	x.reset(dst, skip, e.opts.MaxRows, e.opts.MaxBytes, e.opts.MaxValueBytes)
	x.ser.format = e.opts.Format
	// The watchdog: a statement the server does not stop at its
	// statement_timeout (a function that never looks for a cancel) is
	// canceled from here a moment later, and its connection lingers.
	st.wd.arm(conn.Conn().PgConn(), e.opts.StatementTimeout+watchdogSlack)
	ioErr, canceled, txn := e.exchange(ctx, conn, sql, st.pvals, x)
	watched := st.wd.disarm()
	tDone := time.Now()
	res.Timing.Txn = txn
	res.Timing.DB = tDone.Sub(tConn) - txn
	res.Timing.SerializeOverlap = x.serTime
	if ioErr == nil && !canceled && !watched && lateStopCancel(x) && rollbackAgain(conn.Conn().PgConn()) {
		x.rbErr = nil
	}
	lingering := lingers(ioErr, canceled || watched)
	if lingering {
		rfq := 1 // the envelope's second ReadyForQuery
		if x.stage < stRollback {
			rfq = 2
		}
		e.linger(conn, rfq)
	} else {
		e.release(conn, ioErr == nil && !canceled && !watched && !x.outsideTx && x.rbErr == nil && cleanTag(x))
	}

	var big *pgproto3.ExceededMaxBodyLenErr
	if !canceled && x.inStream && x.written > 0 && errors.As(ioErr, &big) {
		// A message wider than rowBound after rows that fit: taken for a
		// row, which could not fit the document either, so the result
		// ends before it, cut by bytes (the connection, its message
		// unread, is closed). Only its length is read: it may also be
		// the statement's error quoting a long value (docs/pgexec.md).
		ioErr, x.by = nil, "bytes"
	}
	if watched && lingering && !canceled {
		return res, &QueryError{SQLState: codeQueryCanceled, TimedOut: true, Stage: StageQuery, err: ioErr,
			Message: "statement timed out after " + e.opts.StatementTimeout.String() +
				" (the server did not stop it in time; its connection stays taken until it does)"}
	}
	if err := e.callError(ctx, ioErr, canceled, x); err != nil {
		if tDone.Sub(tConn) < quickFail {
			if qe, ok := err.(*QueryError); ok {
				qe.atOnce = true // callers type-switch on *QueryError
			} else {
				err = &failedAtOnce{err}
			}
		}
		return res, err
	}
	res.Columns = st.columns(x)
	if len(x.tag) > 0 && !x.stopSent {
		// A statement cut short has no tag, or one whose count includes
		// rows the caller never got.
		res.Command = string(x.tag)
	}
	if x.by == "" && x.received-x.skip > x.written {
		x.by = "rows" // defensive; addRow sets it
	}
	x.finish()
	res.setDoc(x.doc, e.opts.Format)
	res.Rows, res.TruncatedBy, res.Truncated = x.written, x.by, x.by != ""
	res.Timing.Serialize = time.Since(tDone)
	return res, nil
}

func (r *Result) setDoc(doc []byte, f Format) {
	r.Doc, r.JSON = doc, nil
	if f == FormatJSON {
		r.JSON = doc
	}
}

// acquire checks out a connection that is idle outside any transaction.
// pgxpool already destroys connections released in another state; this
// check makes the envelope independent of how the pool was used before.
func (e *Executor) acquire(ctx context.Context) (*pgxpool.Conn, error) {
	// AcquireTimeout bounds a wait for a busy pool only: with room in it,
	// the call opens a connection, however slowly the server accepts it.
	actx := ctx
	if st := e.pool.Stat(); st.IdleConns() == 0 && st.AcquiredConns()+st.ConstructingConns() >= st.MaxConns() {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, e.opts.AcquireTimeout)
		defer cancel()
	}
	for range 3 {
		conn, err := e.pool.Acquire(actx)
		if err != nil {
			if ctx.Err() == nil && actx.Err() != nil {
				if st := e.pool.Stat(); st.AcquiredConns() >= st.MaxConns() {
					return nil, &PoolBusyError{Wait: e.opts.AcquireTimeout, Size: int(st.MaxConns()), Lingering: int(e.lingering.n.Load())}
				}
			}
			return nil, err
		}
		pc := conn.Conn().PgConn()
		if pc.TxStatus() == 'I' && !pc.IsBusy() && !pc.IsClosed() {
			return conn, nil
		}
		e.release(conn, false)
	}
	return nil, errors.New("pgexec: pool keeps returning connections inside a transaction")
}

// exchange sends the request in one write and reads every reply. It
// returns the connection error (if any), whether ctx's cancellation fired
// during the call, and the envelope's client-side cost.
func (e *Executor) exchange(ctx context.Context, conn *pgxpool.Conn, sql string, params [][]byte, x *exchange) (error, bool, time.Duration) {
	pc := conn.Conn().PgConn()
	fe := pc.Frontend()

	// Cancellation: ask the server to cancel the running statement (its
	// error then arrives like any other and the reply is read to the end),
	// and bound the wait with a read deadline in case it does not answer.
	// A connection whose call saw a cancellation is never reused: a late
	// cancel request could hit the next statement.
	var fired atomic.Bool
	stop := func() bool { return true }
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() {
			fired.Store(true)
			cctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
			_ = pc.CancelRequest(cctx)
			cancel()
			_ = pc.Conn().SetDeadline(time.Now().Add(cancelGrace))
		})
	}

	// No row limit on Execute (0): with one, PostgreSQL plans without
	// parallel workers. Rows past the caps are cut by exchange.stop.
	txn := sendRequest(fe, &e.env, sql, params, 0)
	err := fe.Flush()
	if err == nil {
		err = x.readReplies(pc, fe, e.baseMaxBody)
	}
	if !stop() {
		return err, true, txn
	}
	return err, fired.Load(), txn
}

// rollbackAgain ends the transaction a late cancel left open (see
// lateStopCancel) and reports whether the connection is idle and clean.
func rollbackAgain(pc *pgconn.PgConn) bool {
	ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
	defer cancel()
	_, err := pc.Exec(ctx, rollbackSQL).ReadAll()
	return err == nil && pc.TxStatus() == 'I' && !pc.IsBusy() && !pc.IsClosed()
}

// cleanTag reports whether the statement can have left nothing behind
// that outlives ROLLBACK. Statements that ran and are not SELECT-like (for
// example PREPARE, LOAD, or a COMMIT that ended the envelope early) cost
// their connection, whatever the validator thought of them.
func cleanTag(x *exchange) bool {
	if x.suspended || len(x.tag) == 0 {
		return true
	}
	word := x.tag
	if i := bytes.IndexByte(word, ' '); i >= 0 {
		word = word[:i]
	}
	switch string(word) {
	case "SELECT", "SHOW", "EXPLAIN", "SET", "RESET":
		return true
	}
	return false
}

// release returns conn to the pool only when it is idle outside a
// transaction and clean; otherwise it closes it, and pgxpool destroys a
// closed connection on Release.
func (e *Executor) release(conn *pgxpool.Conn, clean bool) {
	pc := conn.Conn().PgConn()
	if !clean || pc.TxStatus() != 'I' || pc.IsBusy() || pc.IsClosed() {
		e.destroyed.Add(1)
		ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
		_ = conn.Conn().Close(ctx)
		cancel()
	}
	conn.Release()
}

// callError turns what the exchange saw into the call's error.
func (e *Executor) callError(ctx context.Context, ioErr error, canceled bool, x *exchange) error {
	if canceled && (ioErr != nil || x.err != nil) {
		cause := ctx.Err()
		if cause == nil {
			cause = context.Canceled
		}
		return canceledError(cause)
	}
	if ioErr != nil {
		var big *pgproto3.ExceededMaxBodyLenErr
		if errors.As(ioErr, &big) {
			return &QueryError{
				SQLState: codeLimitExceeded,
				Message: fmt.Sprintf("the server sent a message of %d bytes, above the limit of %d bytes for a row (%d per value, and a row at most one value more than a whole result of %d bytes): "+
					"a row too wide, or an error message quoting a long value, which is not read",
					big.ActualBodyLen, big.MaxExpectedBodyLen, e.opts.MaxValueBytes, e.opts.MaxBytes),
				Hint:  "select a part of large values (left(), substring(), length()) instead of the whole value; if no value is that large, the statement failed on one (run it on a part of the rows to see PostgreSQL's error)",
				Stage: StageFetch,
				err:   ioErr,
			}
		}
		var pe *pgconn.PgError
		if errors.As(ioErr, &pe) {
			return fromPgError(pe, StageQuery)
		}
		return fmt.Errorf("pgexec: connection failed: %w", ioErr)
	}
	if x.err != nil {
		if x.errStage < stQuery {
			return fromPgError(x.err, StageEnvelope)
		}
		qe := fromPgError(x.err, StageQuery)
		if qe.SQLState == codeQueryCanceled {
			// Only the envelope's statement_timeout cancels a statement
			// here: client cancellations are handled above.
			qe.TimedOut = true
			qe.Message = "statement timed out after " + e.opts.StatementTimeout.String()
		}
		return qe
	}
	if x.outsideTx {
		return errors.New("pgexec: the connection was already inside a transaction; result discarded")
	}
	if x.limitErr != nil {
		return x.limitErr
	}
	return nil
}
