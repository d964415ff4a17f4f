// Client timeouts (PgBouncer's client_idle_timeout, idle_transaction_timeout
// and query_timeout): a janitor goroutine watches the sessions' message counts.

package proxy

import (
	"context"
	"fmt"
	"time"
)

// limits are the client timeouts in force (0: none).
type limits struct {
	idle, inTx, query time.Duration
}

func (l limits) any() bool { return l.idle > 0 || l.inTx > 0 || l.query > 0 }

// shortest is the smallest limit set.
func (l limits) shortest() time.Duration {
	d := time.Duration(0)
	for _, v := range []time.Duration{l.idle, l.inTx, l.query} {
		if v > 0 && (d == 0 || v < d) {
			d = v
		}
	}
	return d
}

// idleCheck is how often the janitor looks, for the shorter timeout d: a
// quarter of it, within [50 ms, 1 s].
func idleCheck(d time.Duration) time.Duration {
	return min(max(d/4, 50*time.Millisecond), time.Second)
}

// idleJanitor ends, until the proxy drains, the clients that sent nothing
// for Options.ClientIdleTimeout with no transaction open, or for
// Options.IdleTransactionTimeout inside one, in both cases with nothing
// queued and not waiting for a server; and those whose query has run on a
// server for Options.QueryTimeout since their last message. It keeps, per
// session, the message count it last saw, when it moved, and since when
// the session has waited on nothing but its client (no query under way,
// no wait for a server): the sessions only count their messages, and a
// client whose long query just ended has not been idle.
func (p *Proxy) idleJanitor() {
	type mark struct {
		msgs        uint64
		last, since time.Time
	}
	timeout := func(f func() time.Duration) time.Duration {
		if f == nil {
			return 0
		}
		return max(f(), 0)
	}
	marks := make(map[*session]mark)
	for !p.draining.Load() {
		l := limits{timeout(p.opts.ClientIdleTimeout), timeout(p.opts.IdleTransactionTimeout), timeout(p.opts.QueryTimeout)}
		p.idleOn.Store(l.any())
		if !l.any() {
			clear(marks)
			time.Sleep(time.Second)
			continue
		}
		time.Sleep(idleCheck(l.shortest()))
		now := time.Now()
		p.mu.Lock()
		ss := make([]*session, 0, len(p.sessions))
		for s := range p.sessions {
			ss = append(ss, s)
		}
		p.mu.Unlock()
		next := make(map[*session]mark, len(ss))
		for _, s := range ss {
			n := s.msgs.Load()
			m, ok := marks[s]
			if !ok || m.msgs != n {
				m = mark{n, now, now}
			}
			why, busy := s.timeOut(now.Sub(m.since), now.Sub(m.last), l)
			if busy {
				m.since = now
			}
			next[s] = m
			if why != "" {
				p.log.Debug("proxy: closing a client", "addr", s.addr, "user", s.user, "database", s.db, "timeout", why)
			}
		}
		marks = next
	}
}

// counted counts a message read from the client, when a client timeout is
// set: without one, the read path pays only a load.
func (s *session) counted() {
	if s.p.idleOn.Load() {
		s.msgs.Add(1)
	}
}

// timeOut ends the session when it went over a limit of l and names the
// limit: quiet is how long it has waited for nothing but its client,
// asked how long since the client's last message. An idle client is told
// why and closed by its session (wakeKilled); a query over query_timeout
// has its server connection closed under it, which ends the session with
// the reason, and is then cancelled on the server. busy reports a query
// under way or a wait for a server.
func (s *session) timeOut(quiet, asked time.Duration, l limits) (why string, busy bool) {
	s.mu.Lock()
	busy = len(s.queue) > 0 || s.waiting
	if s.killed != nil || s.ending {
		killed := s.killed != nil && !s.ending
		s.mu.Unlock()
		if killed {
			s.wakeKilled() // not seen yet: the session was on its way to the loop
		}
		return "", busy
	}
	var srv = s.srv
	switch {
	case !busy && s.txStatus == 'I' && l.idle > 0 && quiet >= l.idle:
		why = "client_idle_timeout"
		s.killed = &clientError{"57P05", fmt.Sprintf("qprouter: terminating connection due to client_idle_timeout (%s without a message)", l.idle)}
	case !busy && s.txStatus != 'I' && l.inTx > 0 && quiet >= l.inTx:
		why = "idle_transaction_timeout"
		s.killed = &clientError{"25P03", fmt.Sprintf("qprouter: terminating connection due to idle_transaction_timeout (%s idle in a transaction)", l.inTx)}
	case len(s.queue) > 0 && !s.waiting && srv != nil && l.query > 0 && asked >= l.query:
		why = "query_timeout"
		s.killed = &clientError{"57014", fmt.Sprintf("qprouter: terminating connection due to query_timeout (no answer within %s)", l.query)}
		// Closed under mu: the server is still this client's (a release
		// sets s.srv to nil under mu first).
		srv.Net.Close()
	}
	s.mu.Unlock()
	switch why {
	case "":
	case "query_timeout":
		// The backend may still be running the query: stop it.
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), s.p.opts.CancelTimeout)
			defer cancel()
			if err := srv.Cancel(ctx); err != nil {
				s.p.log.Debug("proxy: cancel after query_timeout", "pid", srv.PID, "err", err)
			}
		}()
	default:
		s.wakeKilled()
	}
	return why, busy
}

// wakeKilled makes an idle session see s.killed: a goroutine reading the
// client gets a past deadline, and a session parked on the event loop is
// handed back to its goroutine with the error.
func (s *session) wakeKilled() {
	s.client.Conn.SetReadDeadline(time.Unix(1, 0))
	if lc := s.lp.lc; lc != nil {
		lc.Loop().Post(func() {
			if k := s.killedErr(); k != nil && s.lp.inLoop && s.lp.rsrv == nil && s.lp.waitCh == nil {
				s.handBack(k)
			}
		})
	}
}

// killedErr is the timeout that ended the session, if one did.
func (s *session) killedErr() *clientError {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.killed
}
