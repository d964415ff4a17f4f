// Closing idle clients (PgBouncer's client_idle_timeout and idle_transaction_timeout).

package proxy

import "time"

// idleCheck is how often the janitor looks, for the shorter timeout d: a
// quarter of it, within [50 ms, 1 s].
func idleCheck(d time.Duration) time.Duration {
	return min(max(d/4, 50*time.Millisecond), time.Second)
}

// idleJanitor closes the clients that sent nothing for
// Options.ClientIdleTimeout with no transaction open, or for
// Options.IdleTransactionTimeout inside one, in both cases with nothing
// queued and not waiting for a server, until the proxy drains. It keeps,
// per session, the message count it last saw and since when it has not
// moved nor the session been busy (a query of its under way or waiting
// for a server): the sessions only count their messages, and a client
// whose long query just ended has not been idle.
func (p *Proxy) idleJanitor() {
	type mark struct {
		msgs  uint64
		since time.Time
	}
	timeout := func(f func() time.Duration) time.Duration {
		if f == nil {
			return 0
		}
		return max(f(), 0)
	}
	marks := make(map[*session]mark)
	for !p.draining.Load() {
		idle, inTx := timeout(p.opts.ClientIdleTimeout), timeout(p.opts.IdleTransactionTimeout)
		p.idleOn.Store(idle > 0 || inTx > 0)
		if idle == 0 && inTx == 0 {
			clear(marks)
			time.Sleep(time.Second)
			continue
		}
		shortest := idle
		if shortest == 0 || (inTx > 0 && inTx < shortest) {
			shortest = inTx
		}
		time.Sleep(idleCheck(shortest))
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
				m = mark{n, now}
			}
			why, busy := s.closeIfIdle(now.Sub(m.since), idle, inTx)
			if busy {
				m.since = now
			}
			next[s] = m
			if why != "" {
				p.log.Debug("proxy: closing an idle client", "addr", s.addr, "user", s.user, "database", s.db, "timeout", why)
			}
		}
		marks = next
	}
}

// counted counts a message read from the client, when an idle timeout is
// set: without one, the read path pays only a load.
func (s *session) counted() {
	if s.p.idleOn.Load() {
		s.msgs.Add(1)
	}
}

// closeIfIdle closes the client's connection when it has waited for
// nothing but itself for quiet, at least idle outside a transaction or
// inTx inside one (0: no limit), and names the limit it went over; busy
// reports a query under way or a wait for a server.
func (s *session) closeIfIdle(quiet, idle, inTx time.Duration) (why string, busy bool) {
	s.mu.Lock()
	busy = len(s.queue) > 0 || s.waiting
	if !busy && !s.ending {
		switch {
		case s.txStatus == 'I' && idle > 0 && quiet >= idle:
			why = "client_idle_timeout"
		case s.txStatus != 'I' && inTx > 0 && quiet >= inTx:
			why = "idle_transaction_timeout"
		}
	}
	if why != "" {
		s.ending = true
	}
	s.mu.Unlock()
	if why != "" {
		s.client.Conn.Close()
	}
	return why, busy
}
