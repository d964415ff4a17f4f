// Closing idle clients (PgBouncer's client_idle_timeout).

package proxy

import "time"

// idleCheck is how often the janitor looks, for a timeout d: a quarter of
// it, within [50 ms, 1 s].
func idleCheck(d time.Duration) time.Duration {
	return min(max(d/4, 50*time.Millisecond), time.Second)
}

// idleJanitor closes the clients that sent nothing for
// Options.ClientIdleTimeout while idle (no transaction open, nothing
// queued, not waiting for a server), until the proxy drains. It keeps,
// per session, the message count it last saw and since when it has not
// moved: the sessions only count their messages.
func (p *Proxy) idleJanitor() {
	type mark struct {
		msgs  uint64
		since time.Time
	}
	marks := make(map[*session]mark)
	for !p.draining.Load() {
		d := time.Duration(0)
		if p.opts.ClientIdleTimeout != nil {
			d = p.opts.ClientIdleTimeout()
		}
		if d <= 0 {
			clear(marks)
			time.Sleep(time.Second)
			continue
		}
		time.Sleep(idleCheck(d))
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
			next[s] = m
			if now.Sub(m.since) >= d && s.closeIfIdle() {
				p.log.Debug("proxy: closing an idle client", "addr", s.addr, "user", s.user, "database", s.db, "idle", now.Sub(m.since))
			}
		}
		marks = next
	}
}

// closeIfIdle closes the client's connection when it has nothing under
// way, as drain does, and reports whether it did.
func (s *session) closeIfIdle() bool {
	s.mu.Lock()
	idle := len(s.queue) == 0 && s.txStatus == 'I' && !s.waiting && !s.ending
	if idle {
		s.ending = true
	}
	s.mu.Unlock()
	if idle {
		s.client.Conn.Close()
	}
	return idle
}
