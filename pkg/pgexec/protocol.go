// The wire exchange of one call: the pre-encoded read-only envelope around the agent's statement, and reading the replies.

package pgexec

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// The request, sent in one write (P = Parse, B = Bind, D = Describe,
// E = Execute, S = Sync; every statement is the unnamed one):
//
//	P/B/E   BEGIN TRANSACTION READ ONLY
//	P/B/E   SET LOCAL statement_timeout = <ms>
//	P/B/D/E <agent statement>, Execute without a row limit
//	S       first Sync: ends the error-skipping of this segment
//	P/B/E   ROLLBACK
//	S       second Sync
//
// After an error the server discards every message up to the next Sync, so
// when BEGIN or SET LOCAL fails the agent's statement is never executed.
// Inside an explicit transaction a Sync does not end the transaction, so a
// failed statement leaves it aborted ('E'); the ROLLBACK after the first
// Sync is therefore in a segment of its own and always runs, and the second
// Sync reports the final state, which must be idle ('I').
const (
	beginSQL    = "BEGIN TRANSACTION READ ONLY"
	rollbackSQL = "ROLLBACK"
)

// envelope holds the constant messages, encoded once.
type envelope struct {
	head rawMessages // P/B/E BEGIN, P/B/E SET LOCAL
	tail rawMessages // S, P/B/E ROLLBACK, S
}

// setTimeoutSQL is the envelope's second statement. The value is our own
// integer, so the text is constant per executor.
func setTimeoutSQL(d time.Duration) string {
	return "SET LOCAL statement_timeout = " + strconv.FormatInt(d.Milliseconds(), 10)
}

func newEnvelope(begin, setTimeout string) (envelope, error) {
	var env envelope
	var err error
	head := []byte(nil)
	for _, sql := range []string{begin, setTimeout} {
		if head, err = appendSimpleStatement(head, sql); err != nil {
			return env, err
		}
	}
	tail, err := (&pgproto3.Sync{}).Encode(nil)
	if err != nil {
		return env, err
	}
	if tail, err = appendSimpleStatement(tail, rollbackSQL); err != nil {
		return env, err
	}
	if tail, err = (&pgproto3.Sync{}).Encode(tail); err != nil {
		return env, err
	}
	env.head, env.tail = head, tail
	return env, nil
}

// appendSimpleStatement encodes Parse, Bind and Execute of a statement
// without parameters or result rows.
func appendSimpleStatement(dst []byte, sql string) ([]byte, error) {
	dst, err := (&pgproto3.Parse{Query: sql}).Encode(dst)
	if err != nil {
		return nil, err
	}
	if dst, err = (&pgproto3.Bind{}).Encode(dst); err != nil {
		return nil, err
	}
	return (&pgproto3.Execute{}).Encode(dst)
}

// rawMessages are already-encoded frontend messages; Frontend.Send copies
// them into its write buffer unchanged.
type rawMessages []byte

func (m *rawMessages) Encode(dst []byte) ([]byte, error) { return append(dst, *m...), nil }
func (m *rawMessages) Decode([]byte) error {
	return errors.New("pgexec: rawMessages cannot be decoded")
}
func (m *rawMessages) Frontend() {}

// Stages of the reply, in the order the server answers.
const (
	stBegin        = iota // replies to BEGIN
	stSet                 // replies to SET LOCAL
	stQuery               // replies to the agent's statement
	stQueryDone           // statement complete or suspended, first Sync pending
	stRollback            // after the first ReadyForQuery: replies to ROLLBACK
	stRollbackDone        // ROLLBACK complete, second Sync pending
)

// exchange is the state of reading one call's replies. It lives in a
// callState and is reused. Rows are serialized as they arrive, straight
// from the connection's read buffer (which the next message overwrites),
// so the client's work overlaps the server producing the next rows.
type exchange struct {
	maxRows       int // MaxRows; row skip+maxRows+1 only marks truncation
	skip          int // leading rows read and dropped (RunSkip)
	maxBytes      int
	maxValueBytes int

	stage     int
	err       *pgconn.PgError // first error before the first ReadyForQuery
	errStage  int
	rbErr     *pgconn.PgError // error replying to ROLLBACK
	limitErr  *QueryError     // a value above maxValueBytes
	outsideTx bool            // BEGIN warned that a transaction was already open

	cols      []colInfo
	names     []byte
	doc       []byte // the caller's dst with the document so far
	docStart  int    // len(dst) at the start
	header    bool   // the columns part is written
	written   int    // rows in doc
	received  int    // DataRows received
	by        string // "rows", "bytes" or ""
	suspended bool   // a row limit stopped the portal (not sent today)
	// stopSent: the result is complete for the caller (truncated, or a
	// value too large) and a cancel request was sent so that the server
	// stops producing rows nobody reads; its 57014 error is expected.
	stopSent bool
	// stopAcked: the postmaster acknowledged the stop (CancelRequest read
	// its close), so both of its signals to the backend have been sent.
	stopAcked bool
	tag       []byte
	ser       serializer

	// Serialization time: the client's work between socket reads while
	// rows stream in (see Timing.Serialize).
	serTime  time.Duration
	serMark  time.Time
	inStream bool
}

func (x *exchange) reset(dst []byte, skip, maxRows, maxBytes, maxValueBytes int) {
	*x = exchange{
		skip: skip, maxRows: maxRows, maxBytes: maxBytes, maxValueBytes: maxValueBytes,
		cols: x.cols[:0], names: x.names[:0], tag: x.tag[:0], ser: x.ser,
		doc: dst, docStart: len(dst),
	}
}

// sendRequest puts the whole request into the frontend's buffer and returns
// the time spent on the envelope's own messages. The caller flushes.
func sendRequest(fe *pgproto3.Frontend, env *envelope, sql string, params [][]byte, limit uint32) time.Duration {
	t0 := time.Now()
	fe.Send(&env.head)
	t1 := time.Now()
	fe.SendParse(&pgproto3.Parse{Query: sql})
	fe.SendBind(&pgproto3.Bind{Parameters: params})
	fe.SendDescribe(&pgproto3.Describe{ObjectType: 'P'})
	fe.SendExecute(&pgproto3.Execute{MaxRows: limit})
	t2 := time.Now()
	fe.Send(&env.tail)
	t3 := time.Now()
	return t1.Sub(t0) + t3.Sub(t2)
}

// readReplies reads until the second ReadyForQuery. It returns a non-nil
// error only when the connection itself failed (I/O, protocol, FATAL); then
// the connection is unusable.
func (x *exchange) readReplies(pc *pgconn.PgConn, fe *pgproto3.Frontend, baseMaxBody int) error {
	// Until the columns are known, a message may be as large as one value
	// plus room for an error report; after RowDescription a DataRow may hold
	// one maximal value per column.
	fe.SetMaxBodyLen(x.maxValueBytes + 64<<10)
	defer fe.SetMaxBodyLen(baseMaxBody)
	for {
		// While rows stream in, the time between socket reads is the
		// client's work on them; a read from the socket may wait for the
		// server. The clock is read once per buffer refill, not per row.
		refill := x.inStream && fe.ReadBufferLen() == 0
		if refill {
			x.serTime += time.Since(x.serMark)
		}
		msg, err := pc.ReceiveMessage(context.Background())
		if refill {
			x.serMark = time.Now()
		}
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.DataRow:
			if x.stage == stQuery {
				x.addRow(m.Values)
				if !x.stopSent && (x.by != "" || x.limitErr != nil) {
					x.stopSent = true
					x.stop(pc)
				}
			}
		case *pgproto3.CommandComplete:
			switch x.stage {
			case stBegin, stSet:
				x.stage++
			case stQuery:
				x.tag = append(x.tag[:0], m.CommandTag...)
				x.endStream()
			case stRollback:
				x.stage = stRollbackDone
			}
		case *pgproto3.RowDescription:
			if x.stage == stQuery {
				x.serMark = time.Now()
				x.inStream = true
				x.setColumns(m)
				// A DataRow's bound. Without columns it would be 2 bytes
				// and refuse the CommandComplete after the rows.
				if len(m.Fields) > 0 {
					fe.SetMaxBodyLen(rowBound(len(m.Fields), x.maxValueBytes, x.maxBytes))
				}
			}
		case *pgproto3.PortalSuspended:
			x.suspended = true
			x.endStream()
		case *pgproto3.EmptyQueryResponse:
			if x.stage == stQuery {
				x.endStream()
			}
		case *pgproto3.ErrorResponse:
			pe := pgconn.ErrorResponseToPgError(m)
			if x.stage == stQuery {
				x.endStream()
				if x.stopSent && pe.Code == codeQueryCanceled {
					continue // our own stop: the rows we need are in
				}
			}
			if x.stage < stRollback {
				if x.err == nil {
					x.err, x.errStage = pe, x.stage
				}
			} else if x.rbErr == nil {
				x.rbErr = pe
			}
		case *pgproto3.NoticeResponse:
			// 25001 active_sql_transaction: "there is already a transaction
			// in progress". The caller never sends on a connection that is
			// not idle, so this cannot happen; if it does, the result is
			// discarded and the connection destroyed.
			if x.stage == stBegin && m.Code == "25001" {
				x.outsideTx = true
			}
		case *pgproto3.ReadyForQuery:
			if x.stage < stRollback {
				x.stage = stRollback
			} else {
				return nil
			}
		}
	}
}

// stop asks the server to cancel the statement once the caller has all
// the rows it will get. The Execute carries no row limit, because a
// limited Execute keeps PostgreSQL from using a parallel plan; so an
// over-long result is cut here instead. CancelRequest returns after the
// server has acknowledged it: the backend then stops at its next
// interrupt check, or, if the statement already ended, discards the
// cancel when it next waits for a command (a cancel that lands on the
// ROLLBACK fails it; see lateStopCancel).
func (x *exchange) stop(pc *pgconn.PgConn) {
	ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
	defer cancel()
	// CancelRequest returns nil also when the deadline cut its wait for
	// the acknowledgement.
	x.stopAcked = pc.CancelRequest(ctx) == nil && ctx.Err() == nil
}

// lateStopCancel reports whether the envelope's ROLLBACK failed only
// because our own stop reached it. The postmaster signals a canceled
// backend twice (its pid, then its process group); when the first signal
// ends the statement and the second arrives after the error was handled,
// the second cancels the ROLLBACK. Once the stop was acknowledged both
// signals were sent, and a backend forgets a pending cancel when it
// handles an error, so nothing of the stop is left after that ROLLBACK
// failed: one more ROLLBACK leaves the connection clean (rollbackAgain).
func lateStopCancel(x *exchange) bool {
	return x.stopSent && x.stopAcked && x.rbErr != nil && x.rbErr.Code == codeQueryCanceled
}

func (x *exchange) endStream() {
	if x.inStream {
		x.serTime += time.Since(x.serMark)
		x.inStream = false
	}
	x.stage = stQueryDone
}

// addRow serializes one DataRow: the first maxRows rows, while the
// document stays within maxBytes, after the first skip rows, which are
// dropped. Row skip+maxRows+1 only marks truncation.
func (x *exchange) addRow(vals [][]byte) {
	x.received++
	if x.limitErr != nil {
		return
	}
	for i, v := range vals {
		if len(v) > x.maxValueBytes {
			x.limitErr = valueTooLarge(x.colName(i), x.received, len(v), x.maxValueBytes)
			return
		}
	}
	if x.by == "bytes" || x.received <= x.skip {
		return
	}
	if x.received-x.skip > x.maxRows {
		x.by = "rows"
		return
	}
	if len(vals) != len(x.cols) {
		return // cannot happen: the portal was described
	}
	var ok bool
	x.doc, ok = x.ser.appendRow(x.doc, x.docStart, x.maxBytes, x.written > 0, vals, x.cols)
	if !ok {
		x.by = "bytes"
		return
	}
	x.written++
}

func valueTooLarge(col string, row, size, limit int) *QueryError {
	return &QueryError{
		SQLState: codeLimitExceeded,
		Message: "value in column \"" + col + "\" of row " + strconv.Itoa(row) + " is " + strconv.Itoa(size) +
			" bytes, above the " + strconv.Itoa(limit) + "-byte limit",
		Hint:  "select a part of it (left(), substring(), length()) instead of the whole value",
		Stage: StageFetch,
	}
}

// rowBound is the largest DataRow accepted: one value of at most
// maxValue bytes per column, but in all no more than one such value and a
// whole result document beside the column headers. A wider row could not
// be returned anyway, and reading it whole would cost its size in memory
// (120 columns of a 1 MB value: 120 MB for a 32 KiB document).
func rowBound(cols, maxValue, maxBytes int) int {
	return 2 + 4*cols + min(cols*maxValue, maxValue+maxBytes)
}
