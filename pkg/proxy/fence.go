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
// before it is planned (the fence). Groups without changes (Bind, Execute,
// Describe, Sync: a prepared pipeline's steady state) are planned at once.
//
// Changes to the unnamed statement alone fence less: a group that starts
// with a Parse of the unnamed statement does not depend on them (that
// Parse can only fail on its own, and then the client has no unnamed
// statement either way), so clients that pipeline unnamed statements
// (postgres.js with prepare: false, as advised for PgBouncer) keep their
// pipelines.

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
		f.nfence, f.ufence = f.lastNamed, f.lastUnnamed
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

// fenced tells, with s.mu held, whether a change in a complete group is
// still unanswered.
func (s *session) fenced() bool {
	if len(s.queue) == 0 {
		return false
	}
	head, f := s.queue[0].seq, &s.fc
	return head <= f.nfence || head <= f.ufence && f.ufence > f.uclear
}

// mustWait tells, with s.mu held, whether the client message typ with
// body must wait for earlier answers before it is planned.
func (s *session) mustWait(typ byte, body []byte) bool {
	if len(s.queue) == 0 {
		return false
	}
	if typ == 'P' && len(body) > 0 && body[0] == 0 && s.groupStart() {
		s.fc.uclear = s.fc.seq
	}
	return s.fenced()
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
