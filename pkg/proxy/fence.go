// Fence: a pipelined Sync group waits for the answers to an earlier one that changed statement names.

package proxy

import "errors"

// A client may pipeline several Sync groups in one write. The proxy plans
// each message as it arrives, before the server answers the ones ahead of
// it; when an earlier group fails, PostgreSQL skips the rest of it, and
// the Parses, Closes and DEALLOCATEs skipped there never happened. A later
// group planned on the assumption that they did would name statements
// the server does not have, or miss ones it has. So once a group with such
// a change is complete, the next message waits for that group's answers
// before it is planned (the fence). Only a message whose plan depends on
// what such a group changed waits: one naming a statement (by the client's
// name, or by the server's, which statements of the same text share) that
// the group parsed, closed or evicted, or one whose Parse on the server may
// evict a statement the group parsed (an eviction skipped with its own
// group is undone, right only if that statement's presence is settled),
// or any message that names one after a DEALLOCATE ALL or DISCARD ALL.
// So groups that parse statements of new names, or only Bind, Execute and
// Describe statements that exist (a prepared pipeline's steady state), are
// planned at once.
//
// Changes to the unnamed statement alone hold only messages about the
// unnamed statement (and simple Queries, which drop it), and not a group
// that starts with a Parse of it: that Parse does not depend on them (it
// can only fail on its own, and then the client has no unnamed statement
// either way), so clients that pipeline unnamed statements (postgres.js
// with prepare: false, as advised for PgBouncer) keep their pipelines.

// errLostWaiting ends a session whose server failed while a message
// waited at the fence; the client has already been told.
var errLostWaiting = errors.New("proxy: server lost while a message waited for earlier answers")

// fenceState numbers the entries in the order planned (entry.seq) and
// remembers the last changes.
type fenceState struct {
	seq uint64 // the last entry.seq given
	// lastNamed and lastUnnamed are the seqs of the last entries that
	// change named statements (or a server's list) and the unnamed
	// statement alone; nfence and ufence those of the last ones in a
	// complete group; uclear the seq at which a group began with an
	// unnamed Parse, making earlier unnamed changes irrelevant.
	lastNamed, lastUnnamed uint64
	nfence, ufence, uclear uint64
	// lastEnd is the seq of the last entry that ends a group; target that
	// of the last entry the message at hand waits for (mustWait).
	lastEnd, target uint64
	// ch is closed when the answers have passed the fence (pop).
	ch chan struct{}
}

// noteEntry numbers e, about to be pushed, and records its changes.
func (s *session) noteEntry(e *entry) {
	f := &s.fc
	f.seq++
	e.seq = f.seq
	switch e.kind {
	case kParse, kClose:
		switch {
		case e.unnamed && e.stmt == nil, e.prev > 0:
			f.lastUnnamed = f.seq
		case e.kind == kParse, e.stmtName != "", e.evict != "", e.stmt != nil, e.action != forward:
			f.lastNamed = f.seq
		} // else a portal's Close
	case kQuery:
		if e.stmtName != "" {
			f.lastNamed = f.seq // a DEALLOCATE (DEALLOCATE ALL: noteChange)
		} else if e.prev > 0 {
			f.lastUnnamed = f.seq // may be skipped, and then keeps the unnamed statement
		}
	}
	// A Query behind extended-protocol messages not yet synced is
	// skipped with them when one fails: the group ends at the next Sync.
	e.ends = e.kind == kSync || e.kind == kQuery && !s.extendedRun()
	if e.ends {
		f.nfence, f.ufence, f.lastEnd = f.lastNamed, f.lastUnnamed, f.seq
	}
}

// noteChange marks the entry just pushed as one that changes named
// statements where its fields do not tell (a DEALLOCATE ALL).
func (s *session) noteChange() {
	f := &s.fc
	f.lastNamed = f.seq
	if s.queue[len(s.queue)-1].ends {
		f.nfence = f.seq
	}
}

// fenced tells, with s.mu held, whether the entry the message at hand
// waits for is still unanswered.
func (s *session) fenced() bool {
	return len(s.queue) > 0 && s.queue[0].seq <= s.fc.target
}

// mustWait tells, with s.mu held, whether the client message typ with
// body must wait for earlier answers before it is planned.
func (s *session) mustWait(typ byte, body []byte) bool {
	if len(s.queue) == 0 {
		return false
	}
	f, head := &s.fc, s.queue[0].seq
	if typ == 'P' && len(body) > 0 && body[0] == 0 && s.groupStart() {
		f.uclear = f.seq
	}
	f.target = 0
	if head <= f.ufence && f.ufence > f.uclear && touchesUnnamed(typ, body) {
		f.target = f.ufence
	}
	if head <= f.nfence {
		f.target = max(f.target, s.namedTarget(typ, body))
	}
	return head <= f.target
}

// touchesUnnamed tells whether the plan of the client message typ with
// body reads or replaces the client's unnamed statement (or may: a body
// not all there, a simple Query, which drops it, a FunctionCall).
// Execute, Sync, Flush, COPY data and messages about named statements or
// portals do not, and so never wait for changes to it.
func touchesUnnamed(typ byte, body []byte) bool {
	switch typ {
	case 'E', 'S', 'H', 'd', 'c', 'f':
		return false
	case 'P':
		return len(body) == 0 || body[0] == 0
	case 'B':
		_, rest, ok := cstring(body)
		return !ok || len(rest) == 0 || rest[0] == 0
	case 'D', 'C':
		return len(body) < 2 || body[0] == 'S' && body[1] == 0
	}
	return true
}

// namedTarget returns, with s.mu held, the seq of the last entry in a
// complete group not yet answered whose change to named statements the
// client message typ with body depends on (0: none).
func (s *session) namedTarget(typ byte, body []byte) uint64 {
	r, known := s.refsOf(typ, body)
	if !known {
		return s.fc.nfence
	}
	if r.client == "" && len(r.servers) == 0 {
		return 0
	}
	var t uint64
	for i := range s.queue {
		e := &s.queue[i]
		if e.seq > s.fc.lastEnd {
			break
		}
		if e.stmtsBefore != nil || r.touchedBy(e) {
			t = e.seq
		}
	}
	return t
}

// stmtRefs are the statement names a client message's plan reads: the
// client's name, and server names: the statement it means and those an
// eviction to make room for it may close.
type stmtRefs struct {
	client  string
	servers []string
}

// touchedBy tells whether entry e changes what r names, or may undo it:
// the client's statement under that name, or the server's list.
func (r *stmtRefs) touchedBy(e *entry) bool {
	if r.client != "" && (e.stmtName == r.client || e.action == renameError && e.errTo == r.client) {
		return true
	}
	for _, name := range r.servers {
		switch {
		case e.kind == kParse && e.stmt != nil && e.stmt.server == name,
			e.evict == name,
			e.kind == kQuery && e.stmtName != "" && e.errFrom == name, // a DEALLOCATE
			e.action == renameError && e.errFrom == name:
			return true
		}
	}
	return false
}

// refsOf returns, with s.mu held, the names the plan of the client
// message typ with body reads, and false when it may read any (or the
// body is not all there).
func (s *session) refsOf(typ byte, body []byte) (r stmtRefs, known bool) {
	cache := s.p.opts.CacheUnnamed // the unnamed statement may be a named one on the server
	server := ""
	switch typ {
	case 'P':
		name, rest, ok := cstring(body)
		if !ok {
			return r, false
		}
		if name == "" {
			return r, !cache
		}
		query, params, ok := cstring(rest)
		if !ok {
			return r, false
		}
		r.client = name
		if server = s.serverOf(name); server == "" {
			server = serverName(query, params, s.varsKey)
		}
	case 'B':
		_, rest, ok := cstring(body)
		if !ok {
			return r, false
		}
		name, _, ok := cstring(rest)
		if !ok || name == "" {
			return r, ok && !cache
		}
		r.client, server = name, s.serverOf(name)
	case 'D', 'C':
		if len(body) < 2 {
			return r, false
		}
		name, _, ok := cstring(body[1:])
		if !ok || body[0] != 'S' {
			return r, ok
		}
		if name == "" {
			return r, !cache
		}
		r.client = name
		if typ == 'C' {
			return r, true // only the client's name: the Close goes to no statement
		}
		server = s.serverOf(name)
	case 'Q':
		sql, _, ok := cstring(body)
		if !ok || cache {
			return r, false
		}
		name, ok := deallocateName(sql)
		if !ok {
			// DEALLOCATE ALL, DISCARD ALL: all of them
			return r, !scanWords(sql).drop
		}
		r.client, server = name, s.serverOf(name)
	default:
		return r, true
	}
	if server != "" {
		r.servers = append(r.servers, server)
	}
	// A Parse on the server may first evict the least recently used:
	// should that eviction be skipped, it is undone, which is right only
	// if the statement's presence there is settled.
	if n := s.sst.stmts.Len() - int(s.p.prepared.Load()) + 1; n > 0 {
		keys := s.sst.stmts.Keys() // oldest first
		r.servers = append(r.servers, keys[:min(n, len(keys))]...)
	}
	return r, true
}

// serverOf is the server's name of the client's statement name, "" when
// the client has none; should the name be unsettled, the client's name
// alone makes the message wait.
func (s *session) serverOf(name string) string {
	if st := s.stmts[name]; st != nil {
		return st.server
	}
	return ""
}

// fenceReached wakes a message waiting at the fence, with s.mu held,
// once the answers have passed it (pop).
func (s *session) fenceReached() {
	if s.fc.ch != nil && !s.fenced() {
		close(s.fc.ch)
		s.fc.ch = nil
	}
}

// awaitFence sends what is buffered for the server and waits, on the
// session's goroutine, until the answers have passed the fence: relayed
// here when no server goroutine runs, else by that goroutine.
func (s *session) awaitFence() error {
	if err := s.flushServer(); err != nil {
		return err
	}
	s.mu.Lock()
	reading := s.reading
	s.mu.Unlock()
	if !reading {
		s.relayInline()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.fenced() {
		if !s.reading {
			return errLostWaiting // relayInline stopped short: the server failed
		}
		ch, done := make(chan struct{}), s.done
		s.fc.ch = ch
		s.mu.Unlock()
		select {
		case <-ch:
		case <-done:
		}
		s.mu.Lock()
	}
	return nil
}
