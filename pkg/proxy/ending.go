// Ending: cancelling, draining and ending a session, and resetting a server it leaves.

package proxy

import (
	"context"
	"strings"
	"time"

	"github.com/qpkit/qpkit/pkg/pool"
)

// cancel delivers a cancel request to the server working for the client;
// the server is not released meanwhile. A client still waiting for a
// server has its wait ended instead (cancelWait).
func (s *session) cancel() {
	if s.cancelWait() {
		return
	}
	s.cmu.Lock()
	defer s.cmu.Unlock()
	s.mu.Lock()
	srv := s.srv
	busy := len(s.queue) > 0
	s.mu.Unlock()
	if srv == nil || !busy {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.p.opts.CancelTimeout)
	defer cancel()
	if err := srv.Cancel(ctx); err != nil {
		s.p.log.Debug("proxy: cancel delivery", "pid", srv.PID, "err", err)
	}
}

// settled tells, with s.mu held, whether the server owes the client
// nothing and holds nothing of its: every answer in, no transaction, no
// extended-protocol run without its Sync. Only such a server may serve
// another client; one left otherwise is discarded, so that its backend
// rolls the client's work back as it would for a direct client.
func (s *session) settled() bool {
	return len(s.queue) == 0 && s.txStatus == 'I' && !s.openRun && !s.skipping && !s.srvClosed
}

// drain closes the client when it is between transactions (Shutdown).
func (s *session) drain() {
	s.mu.Lock()
	idle := s.settled() && !s.waiting
	s.ending = s.ending || idle
	s.mu.Unlock()
	if idle {
		s.client.Conn.Close()
	}
}

// abort cuts the session when the drain's time is up: its client, and
// the read of a server still working for it (a long statement would
// otherwise hold Shutdown until it ends); that server is discarded.
func (s *session) abort() {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	s.client.Conn.Close()
	switch {
	case srv == nil:
	case srv.Raw != nil:
		srv.Raw.Close() // on an event loop: its handler sees the close
	default:
		srv.Net.SetReadDeadline(time.Unix(1, 0))
	}
}

// end stops the server goroutine, gives the server back (reset, released
// or discarded) and reports final to the client.
func (s *session) end(final *clientError) {
	s.returnSlot()
	s.mu.Lock()
	s.ending = true
	srv := s.srv
	done := s.done
	clean := s.settled()
	s.mu.Unlock()
	if srv != nil {
		switch {
		case s.stalling.Load():
			// A timeout stopped the relay: its deadlines end it at a
			// message boundary (it finishes a row it has begun), and it
			// discards srv.
		case clean:
			srv.Net.SetReadDeadline(time.Unix(1, 0)) // wakes the goroutine on a message boundary
		default:
			srv.Net.Close()
		}
	}
	<-done
	s.mu.Lock()
	srv = s.srv
	s.srv = nil
	clean = clean && s.stopClean && s.settled()
	pinned := s.pinned
	s.mu.Unlock()
	s.cmu.Lock() // a cancel under way is delivered before srv serves anyone else
	s.cmu.Unlock()
	if srv != nil {
		pl := srv.Pool()
		if !clean {
			pl.Discard(srv)
		} else {
			srv.Net.SetReadDeadline(time.Time{})
			if s.rename && !pinned {
				pl.Release(srv)
			} else {
				s.checkIn(pl, srv)
			}
		}
	}
	if final != nil {
		// Last words: a client that reads nothing must not hold the session.
		s.client.Conn.SetWriteDeadline(time.Now().Add(time.Second))
		s.cw.Write(appendErrorResponse(nil, "FATAL", final.code, final.msg))
		s.cw.Flush()
	}
	if s.pool != nil {
		s.pool.Leave()
	}
}

// cancelOrphan stops, with a cancel request, the statement a discarded
// server may still be running for a client the proxy ended (a timeout,
// KILL_CLIENT). The backend would otherwise run it to its end, since
// PostgreSQL sees a closed socket only when it next writes, and hold a
// connection slot beside the pool's new one all that time. A client that
// leaves by itself mid-statement is not cancelled: its statement runs to
// its end (and commits), as on a direct connection.
func (s *session) cancelOrphan(srv *pool.Conn, why string) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.p.opts.CancelTimeout)
		defer cancel()
		if err := srv.Cancel(ctx); err != nil {
			s.p.log.Debug("proxy: cancel of an orphaned statement", "pid", srv.PID, "why", why, "err", err)
		}
	}()
}

// checkIn resets a server leaving a session-mode (or pinned) client and,
// in the same round trip, applies the client's startup settings: the next
// client, which usually sends the same ones (an application reconnecting,
// pgbench -C), then needs no replay before its welcome.
func (s *session) checkIn(pl *pool.Pool, srv *pool.Conn) {
	qs := []string{pl.ResetQuery()}
	if s.startKey != "" {
		qs = append(qs, resetAll+s.startKey)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, errs, err := srv.ExecBatch(ctx, qs...)
	if err == nil && errs[0] != nil {
		err = errs[0]
	}
	if err != nil || st != 'I' {
		s.p.log.Debug("proxy: reset failed", "pool", pl.Name(), "pid", srv.PID, "err", err)
		pl.Discard(srv)
		return
	}
	sst := newServerState()
	if !dropsStatements(qs[0]) {
		// A custom reset may have left statements: close each before
		// parsing it there again.
		sst.unsure = true
	}
	if len(qs) == 2 && errs[1] == nil {
		sst.varsKey = s.startKey
	}
	srv.State = sst
	pl.Release(srv)
}

// dropsStatements reports whether a reset query surely drops every
// prepared statement: DISCARD ALL (the default) or DEALLOCATE [PREPARE]
// ALL, alone or among other statements.
func dropsStatements(reset string) bool {
	for _, stmt := range strings.Split(reset, ";") {
		switch strings.Join(strings.Fields(strings.ToUpper(stmt)), " ") {
		case "DISCARD ALL", "DEALLOCATE ALL", "DEALLOCATE PREPARE ALL":
			return true
		}
	}
	return false
}
