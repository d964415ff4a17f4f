// Telling "the database is down" apart from query errors, and the retry that hides a stale pooled connection.

package mcpserver

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/qpkit/qpkit/pkg/pgexec"
	"github.com/qpkit/qpkit/pkg/safesql"
)

// DefaultConnectTimeout bounds a new connection's dial and start-up, so a
// call while the database is down fails promptly.
const DefaultConnectTimeout = 2 * time.Second

// ConfigureLazyPool readies a pool config for New: the executor's session
// settings (pgexec.ConfigurePool), a connect timeout of
// DefaultConnectTimeout unless the URL set one (connect_timeout), and no
// connections opened in advance. pgxpool.NewWithConfig then succeeds while
// the database is down; connections are made on first use.
func ConfigureLazyPool(cfg *pgxpool.Config) {
	pgexec.ConfigurePool(cfg)
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	cfg.MinConns = 0
	cfg.MinIdleConns = 0
}

// unavailable is the error of a call that could not reach the database.
type unavailable struct{ cause error }

func (u *unavailable) Error() string { return "database unavailable: " + shortCause(u.cause) }
func (u *unavailable) Unwrap() error { return u.cause }

// shortCause is the innermost useful text of a connection error.
func shortCause(err error) string {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		err = ce.Unwrap()
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "connect timed out"
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message
	}
	var qe *pgexec.QueryError
	if errors.As(err, &qe) {
		return qe.Message
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && len(s)-i > 8 {
		s = s[i+2:]
	}
	return s
}

// isUnavailable tells whether err means the database could not be reached
// or dropped the connection, as opposed to a refusal, a bad argument or a
// query error.
func isUnavailable(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var r *safesql.Refusal
	if errors.As(err, &r) {
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var qe *pgexec.QueryError
	if errors.As(err, &qe) {
		// Class 08 connection exception; 57P01..57P03 shutdown, crash,
		// cannot connect now. Not 08P01: the server answers a statement's
		// own protocol errors (a Bind with the wrong number of parameters)
		// with it, on a connection that is fine; sending it again would
		// only repeat the error.
		s := qe.SQLState
		return (strings.HasPrefix(s, "08") && s != "08P01") || s == "57P01" || s == "57P02" || s == "57P03" ||
			s == "57P05" // idle_session_timeout: the server closes only an idle session so
	}
	// pgexec's "acquire connection" and "connection failed" errors.
	s := err.Error()
	return strings.Contains(s, "pgexec: acquire connection") || strings.Contains(s, "pgexec: connection failed")
}

// notStarted: err cannot have come from a statement that ran: the call
// failed while acquiring its connection, or as soon as it was sent.
func notStarted(err error) bool {
	return errors.Is(err, pgexec.ErrFailedAtOnce) || strings.Contains(err.Error(), "pgexec: acquire connection")
}

// isConnectFailure tells whether err happened while making a new
// connection, where a retry at once would only fail again.
func isConnectFailure(err error) bool {
	var ce *pgconn.ConnectError
	return errors.As(err, &ce)
}

// runResilient calls fn and, when it failed on a pooled connection that
// the database had dropped (a restart), once more on a fresh one; every
// statement is read-only, so running it again is safe. Only a call whose
// connection failed as soon as it was sent (pgexec.ErrFailedAtOnce), or
// before (acquiring it), runs again: a statement an operator killed while
// it ran (pg_terminate_backend, the same 57P01 as a restart) returns its
// error. An error meaning the database is down comes back as
// *unavailable.
func runResilient[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	v, err := fn()
	if isUnavailable(ctx, err) && !isConnectFailure(err) && notStarted(err) {
		v, err = fn()
	}
	if isUnavailable(ctx, err) {
		return v, &unavailable{cause: err}
	}
	return v, err
}
