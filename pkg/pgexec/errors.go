// Errors a call returns: the server's own, and plain words for timeouts, cancellations and limits.

package pgexec

import (
	"context"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
)

// Stage says which part of the request an error came from.
type Stage string

const (
	// StageEnvelope: BEGIN READ ONLY or SET LOCAL failed, so the server
	// skipped the agent's statement; it did not run.
	StageEnvelope Stage = "envelope"
	// StageQuery: the agent's statement (its Parse, Bind or Execute) failed.
	StageQuery Stage = "query"
	// StageFetch: the executor refused a row while reading (a limit).
	StageFetch Stage = "fetch"
)

// SQLSTATE codes the executor relies on.
const (
	codeQueryCanceled = "57014" // statement_timeout or a cancel request
	codeLimitExceeded = "54000" // program_limit_exceeded, used for MaxValueBytes
)

// QueryError is the error of a statement that reached the server, or was
// refused while its rows were read. It carries the server's fields so an
// agent can fix its SQL; for timeouts and cancellations Message says so
// plainly and TimedOut or Canceled is set. Unwrap gives the underlying
// *pgconn.PgError or context error.
type QueryError struct {
	SQLState string
	Message  string
	Detail   string
	Hint     string
	Position int32 // 1-based character offset into the statement text; 0 when unknown
	Stage    Stage
	TimedOut bool // the server's statement_timeout stopped the statement
	Canceled bool // the caller's context ended the call
	err      error
	atOnce   bool // ErrFailedAtOnce
}

func (e *QueryError) Error() string {
	b := make([]byte, 0, 64+len(e.Message)+len(e.Detail)+len(e.Hint))
	if e.Stage == StageEnvelope {
		b = append(b, "read-only transaction setup failed, statement not run: "...)
	}
	b = append(b, e.Message...)
	if e.SQLState != "" {
		b = append(b, " (SQLSTATE "...)
		b = append(b, e.SQLState...)
		b = append(b, ')')
	}
	if e.Position > 0 {
		b = append(b, " at character "...)
		b = strconv.AppendInt(b, int64(e.Position), 10)
	}
	if e.Detail != "" {
		b = append(b, "; detail: "...)
		b = append(b, e.Detail...)
	}
	if e.Hint != "" {
		b = append(b, "; hint: "...)
		b = append(b, e.Hint...)
	}
	return string(b)
}

func (e *QueryError) Unwrap() error { return e.err }

// Is reports ErrFailedAtOnce for an error that came as soon as the call
// was sent.
func (e *QueryError) Is(target error) bool { return target == ErrFailedAtOnce && e.atOnce }

// fromPgError keeps the fields an agent needs from a server error, each
// cut to maxErrorText bytes: PostgreSQL quotes the offending value in a
// message, and a value built from a whole table ("invalid input syntax
// for type integer: ..." of a string_agg) would otherwise carry rows past
// MaxRows and MaxBytes.
func fromPgError(pe *pgconn.PgError, stage Stage) *QueryError {
	return &QueryError{
		SQLState: pe.Code,
		Message:  cutText(pe.Message),
		Detail:   cutText(pe.Detail),
		Hint:     cutText(pe.Hint),
		Position: pe.Position,
		Stage:    stage,
		err:      pe,
	}
}

// PoolBusyError: every pool connection stayed busy for the whole
// AcquireTimeout, so the statement was not sent. The database is up; the
// caller may try again later.
type PoolBusyError struct {
	Wait time.Duration
	Size int // the pool's connections, all of them in use
	// Lingering of them wait for a canceled statement that the server
	// has not stopped yet (linger.go).
	Lingering int
}

func (e *PoolBusyError) Error() string {
	msg := "pgexec: no database connection free within " + e.Wait.String() +
		" (all " + strconv.Itoa(e.Size) + " in use by other calls"
	if e.Lingering > 0 {
		msg += ", " + strconv.Itoa(e.Lingering) + " of them still held by canceled statements the server has not stopped"
	}
	return msg + "); try again later"
}

// canceledError reports that the caller's context ended the call; cause is
// ctx.Err() (context.Canceled or context.DeadlineExceeded).
func canceledError(cause error) *QueryError {
	msg := "canceled by the client"
	if errors.Is(cause, context.DeadlineExceeded) {
		msg = "canceled by the client (context deadline exceeded)"
	}
	return &QueryError{SQLState: codeQueryCanceled, Message: msg, Stage: StageQuery, Canceled: true, err: cause}
}

// maxErrorText bounds each text field of a server error an agent is
// given.
const maxErrorText = 2048

// cutText cuts s to at most maxErrorText bytes on a UTF-8 boundary,
// marking the cut.
func cutText(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	const mark = "... (cut)"
	n := maxErrorText - len(mark)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + mark
}
