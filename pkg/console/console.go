// Package console serves PgBouncer's admin console: a database with no
// server behind it ("pgbouncer" by default) where an admin user runs SHOW,
// PAUSE, RESUME, RELOAD and SHUTDOWN over the simple query protocol, so
// that the scripts, dashboards and exporters written for PgBouncer keep
// working against qprouter. The columns are PgBouncer 1.18's, with its
// names, order and types; what qprouter does not measure is NULL rather
// than a made-up zero.
package console

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/qpkit/qpkit/pkg/pgwire"
)

// Role is what a console user may do.
type Role int

const (
	// NoAccess users are refused at login, as PgBouncer refuses users in
	// neither admin_users nor stats_users.
	NoAccess Role = iota
	// StatsOnly users may run SHOW (PgBouncer's stats_users).
	StatsOnly
	// Admin users may run every command (PgBouncer's admin_users).
	Admin
)

// Console answers console clients from a Source.
type Console struct {
	Source Source
	// Version is what SHOW VERSION and the server_version parameter say.
	Version string
	// MaxMessage bounds a client message (at most and by default 64 KiB).
	MaxMessage int
	Log        *slog.Logger
	// Database is the console's own database name: DISABLE, ENABLE,
	// PAUSE, KILL, RECONNECT and WAIT_CLOSE refuse it, as PgBouncer's
	// "cannot ... admin db" errors.
	Database string

	mu       sync.Mutex
	sessions map[*pgwire.Client]*session // the clients Serve runs
}

// maxConsoleMessage bounds a console message: a SET of a long server URL
// fits many times over.
const maxConsoleMessage = 64 << 10

// Serve runs the console for an authenticated client with role until the
// client leaves or ctx ends; it closes nothing but when ctx ends, the
// client's connection, to stop a read.
func (c *Console) Serve(ctx context.Context, cl *pgwire.Client, role Role) {
	conn := cl.Conn
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	log := c.logger()
	if role == NoAccess {
		pgwire.WriteError(conn, "FATAL", "08P01", "not allowed")
		return
	}
	params := map[string]string{"server_version": c.Version, "client_encoding": "UTF8", "server_encoding": "UTF8",
		"DateStyle": "ISO", "TimeZone": "UTC", "standard_conforming_strings": "on", "integer_datetimes": "on",
		"application_name": cl.Startup.Params["application_name"]}
	if err := cl.Welcome(params); err != nil {
		return
	}
	be := pgproto3.NewBackend(conn, conn)
	// pgproto3 reserves a message's declared length before its bytes
	// come: the console, which takes short commands, keeps that small
	// (PgBouncer's admin console takes small packets only). With the
	// session limit (1 GB), eight bytes made qprouter allocate 1 GiB.
	limit := min(c.MaxMessage, maxConsoleMessage)
	if limit <= 0 {
		limit = maxConsoleMessage
	}
	be.SetMaxBodyLen(limit)
	s := &session{c: c, ctx: ctx, role: role, out: be}
	c.register(cl, s)
	defer c.unregister(cl)
	extended := false // an extended-protocol message was refused: skip to Sync
	for {
		msg, err := be.Receive()
		if err == nil {
			s.lastRequest.Store(time.Now().UnixNano())
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && ctx.Err() == nil {
				log.Debug("console: client read failed", "addr", conn.RemoteAddr().String(), "err", err)
				pgwire.WriteError(conn, "FATAL", "08P01", "console: "+err.Error())
			}
			return
		}
		switch m := msg.(type) {
		case *pgproto3.Query:
			s.run(m.String)
			be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		case *pgproto3.Terminate:
			return
		case *pgproto3.Sync:
			extended = false
			be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		case *pgproto3.Parse, *pgproto3.Bind, *pgproto3.Describe, *pgproto3.Execute, *pgproto3.Close, *pgproto3.Flush:
			if !extended {
				extended = true
				s.fail("08P01", "the admin console takes the simple query protocol only")
			}
		default:
			pgwire.WriteError(conn, "FATAL", "08P01", "console: unexpected message")
			return
		}
		if err := be.Flush(); err != nil {
			return
		}
		if s.shutdown {
			c.Source.Shutdown()
			return
		}
	}
}

func (c *Console) register(cl *pgwire.Client, s *session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessions == nil {
		c.sessions = make(map[*pgwire.Client]*session)
	}
	c.sessions[cl] = s
}

func (c *Console) unregister(cl *pgwire.Client) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.sessions, cl)
}

func (c *Console) session(cl *pgwire.Client) *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessions[cl]
}

// Cancel is a CancelRequest with cl's key: a PAUSE or WAIT_CLOSE that cl
// is waiting for ends with ERROR 57014, and such a PAUSE first resumes
// what it paused (as PgBouncer resumes the pooler on a console client's
// cancel), so that an admin can back out of a PAUSE that takes too long
// with psql's ^C. It reports whether a wait was cancelled; a cancel when
// cl waits for nothing does nothing, as PostgreSQL's.
func (c *Console) Cancel(cl *pgwire.Client) bool {
	s := c.session(cl)
	return s != nil && s.cancelWait()
}

// RequestTime is when cl last sent a message (SHOW CLIENTS'
// request_time); zero before its first one or when Serve does not run it.
func (c *Console) RequestTime(cl *pgwire.Client) time.Time {
	s := c.session(cl)
	if s == nil {
		return time.Time{}
	}
	if n := s.lastRequest.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

func (c *Console) logger() *slog.Logger {
	if c.Log == nil {
		return slog.Default()
	}
	return c.Log
}
