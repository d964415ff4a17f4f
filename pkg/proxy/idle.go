// Client timeouts (PgBouncer's client_idle_timeout, idle_transaction_timeout,
// query_timeout and transaction_timeout): a janitor goroutine watches the
// sessions' counts of messages and transactions.

package proxy

import (
	"fmt"
	"github.com/qpkit/qpkit/pkg/pool"
	"time"
)

// limits are the client timeouts in force (0: none).
type limits struct {
	idle, inTx, query, tx time.Duration
}

func (l limits) any() bool { return l.shortest() > 0 }

// shortest is the smallest limit set.
func (l limits) shortest() time.Duration {
	d := time.Duration(0)
	for _, v := range []time.Duration{l.idle, l.inTx, l.query, l.tx} {
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
// queued and not waiting for a server; those whose query has run on a
// server for Options.QueryTimeout since their last message; and those
// with a transaction open for Options.TransactionTimeout. It keeps, per
// session, a mark: the sessions only count their messages and the ends
// of their transactions, and the janitor notes when the counts moved.
func (p *Proxy) idleJanitor() {
	timeout := func(f func() time.Duration) time.Duration {
		if f == nil {
			return 0
		}
		return max(f(), 0)
	}
	marks := make(map[*session]mark)
	for !p.draining.Load() {
		l := limits{timeout(p.opts.ClientIdleTimeout), timeout(p.opts.IdleTransactionTimeout),
			timeout(p.opts.QueryTimeout), timeout(p.opts.TransactionTimeout)}
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
			n, e := s.msgs.Load(), s.txEnds.Load()
			m, ok := marks[s]
			if !ok {
				m = mark{msgs: n, txEnds: e, last: now, since: now}
			}
			if m.msgs != n {
				m.msgs, m.last, m.since = n, now, now
			}
			if m.txEnds != e {
				m.txEnds, m.txSince = e, time.Time{}
			}
			if why := s.timeOut(now, &m, l); why != "" {
				p.log.Debug("proxy: closing a client", "addr", s.addr, "user", s.user, "database", s.db, "timeout", why)
			}
			next[s] = m
		}
		marks = next
	}
}

// mark is what the janitor knows of a session.
type mark struct {
	msgs   uint64    // messages read from the client
	txEnds uint64    // transactions ended
	last   time.Time // when msgs last moved: the client's last message
	// since is since when the session has waited on nothing but its
	// client (no query under way, no wait for a server): a client whose
	// long query just ended has not been idle.
	since time.Time
	// txSince is when the janitor first saw the open transaction (zero:
	// none), a check late at most.
	txSince time.Time
}

// counted counts a message read from the client, when a client timeout is
// set: without one, the read path pays only a load.
func (s *session) counted() {
	if s.p.idleOn.Load() {
		s.msgs.Add(1)
	}
}

// txEnded counts a transaction's end (ReadyForQuery, idle), likewise.
func (s *session) txEnded() {
	if s.p.idleOn.Load() {
		s.txEnds.Add(1)
	}
	if f := s.p.opts.OnTransaction; f != nil {
		name := s.servingPool()
		var d time.Duration
		if !s.txBegan.IsZero() {
			d = time.Since(s.txBegan)
			s.txBegan = time.Time{}
		}
		f(name, d)
	}
}

// timeOut ends the session when it went over a limit of l, and names the
// limit; it updates m's view of the session. An idle client is told why
// and closed by its session (wakeKilled); one whose query runs over a
// limit has its server connection closed under it, which ends the
// session with the reason, and the query is then cancelled on the server.
func (s *session) timeOut(now time.Time, m *mark, l limits) (why string) {
	s.mu.Lock()
	busy := len(s.queue) > 0 || s.waiting
	if busy {
		m.since = now
	}
	inTx := busy || !s.settled() // an open extended-protocol run is an implicit transaction
	if !inTx {
		m.txSince = time.Time{}
	} else if m.txSince.IsZero() {
		m.txSince = now
	}
	if s.killed != nil || s.ending {
		killed := s.killed != nil && !s.ending
		s.mu.Unlock()
		if killed {
			s.wakeKilled() // not seen yet: the session was on its way to the loop
		}
		return ""
	}
	srv := s.srv
	running := len(s.queue) > 0 && !s.waiting && srv != nil
	quiet := now.Sub(m.since)
	switch {
	case !busy && !inTx && l.idle > 0 && quiet >= l.idle:
		why = "client_idle_timeout"
		s.killed = &clientError{"57P05", fmt.Sprintf("qprouter: terminating connection due to client_idle_timeout (%s without a message)", l.idle)}
	case (running || !busy) && inTx && l.tx > 0 && now.Sub(m.txSince) >= l.tx:
		why = "transaction_timeout"
		s.killed = &clientError{"25P04", fmt.Sprintf("qprouter: terminating connection due to transaction_timeout (a transaction open for %s)", l.tx)}
	case !busy && inTx && l.inTx > 0 && quiet >= l.inTx:
		why = "idle_transaction_timeout"
		s.killed = &clientError{"25P03", fmt.Sprintf("qprouter: terminating connection due to idle_transaction_timeout (%s idle in a transaction)", l.inTx)}
	case running && l.query > 0 && now.Sub(m.last) >= l.query:
		why = "query_timeout"
		s.killed = &clientError{"57014", fmt.Sprintf("qprouter: terminating connection due to query_timeout (no answer within %s)", l.query)}
	}
	if why != "" && running {
		// Closed under mu (or, for a goroutine's relay, given a past read
		// deadline): the server is still this client's (a release sets
		// s.srv to nil under mu first), and srvClosed keeps an answer
		// already read to its end from releasing it.
		if s.relayGo {
			// Writes fail at once, as on a closed socket: nothing the
			// client sends from now on (a COMMIT) reaches the server,
			// whose transaction dies with it when it is discarded.
			s.stalling.Store(true) // before the cancel: the relay forwards none of its answer
			srv.Net.SetWriteDeadline(time.Unix(1, 0))
			srv.Net.SetReadDeadline(time.Unix(1, 0))
		} else {
			srv.Net.Close()
		}
		s.srvClosed = true
	}
	s.mu.Unlock()
	switch {
	case why == "":
	case running:
		s.cancelOrphan(srv, why) // the backend may still be running the query
		s.stopRelay(srv)
	default:
		s.wakeKilled()
	}
	return why
}

// stopRelay ends a relay of srv's answer that waits on its client, after
// a timeout closed srv: a client that stopped reading would otherwise
// keep the relay, and with it srv's place in the pool, for good. A
// goroutine blocked writing gets a write deadline (stalledClient), and so
// does each write after it (clientWriter): a client that reads, however
// slowly, gets its rows and then the FATAL; on the event loop, which
// waits for the client to drain, the relay is failed once the client's
// queue has not moved for stalledClient (a client that reads gets its
// rows, then the FATAL, as before).
func (s *session) stopRelay(srv *pool.Conn) {
	s.stalling.Store(true)
	s.client.Conn.SetWriteDeadline(time.Now().Add(stalledClient))
	lc := s.lp.lc
	if lc == nil {
		return
	}
	loop, last := lc.Loop(), -1
	var check func()
	check = func() {
		if !s.lp.inLoop || s.lp.rsrv != srv {
			return // the relay ended, or went to a goroutine (the deadline)
		}
		n := s.lp.lc.Pending()
		if n > 0 && n == last {
			s.failOnLoop(srv, "", true)
			return
		}
		last = n
		time.AfterFunc(stalledClient, func() { loop.Post(check) })
	}
	time.AfterFunc(stalledClient, func() { loop.Post(check) })
}

// stalledClient is how long a timed-out relay waits for a client that
// does not read before giving up on it (stopRelay).
const stalledClient = time.Second

// clientWriter is the client's connection as the session's writer sees
// it. Once a timeout has closed the server (stopRelay), every write of at
// most stalledChunk bytes gets stalledClient from its start, where one
// deadline for the rest of the answer would cut a client that reads it
// more slowly than in a second.
type clientWriter struct{ s *session }

// stalledChunk bounds what one deadline covers: 64 KiB in a second.
const stalledChunk = 64 << 10

func (w clientWriter) Write(p []byte) (int, error) {
	c := w.s.client.Conn
	if !w.s.stalling.Load() {
		return c.Write(p)
	}
	n := 0
	for n < len(p) {
		part := p[n:min(len(p), n+stalledChunk)]
		c.SetWriteDeadline(time.Now().Add(stalledClient))
		m, err := c.Write(part)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// wakeKilled makes an idle session see s.killed: a goroutine reading the
// client gets a past deadline, and a session parked on the event loop is
// handed back to its goroutine with the error.
func (s *session) wakeKilled() {
	s.client.Conn.SetReadDeadline(time.Unix(1, 0))
	if lc := s.lp.lc; lc != nil {
		lc.Loop().Post(func() {
			if k := s.killedErr(); k != nil && s.lp.inLoop && s.lp.rsrv == nil && s.lp.waitCh == nil {
				s.handBack(backTimeout, k)
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
