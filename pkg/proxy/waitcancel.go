// Cancel requests for clients whose statement still waits for a server.

package proxy

import (
	"errors"
	"time"
)

// A cancel request that comes while the client's statement waits for a
// server (the pool is busy, or paused) ends the wait: the client gets
// 57014, as PostgreSQL answers a cancelled statement, and keeps its
// connection. Nothing ran, so nothing is sent to a server. PgBouncer 1.18
// ignores such a cancel, and the client waits on until a server is free.

// errWaitCancelled is lockServer's answer when a cancel ended the wait.
var errWaitCancelled = errors.New("qprouter: the wait for a server was cancelled")

// cancelledError is the ErrorResponse a cancelled wait answers with: the
// code and text of PostgreSQL's own.
var cancelledError = appendErrorResponse(nil, "ERROR", "57014", "canceling statement due to user request")

// readyIdle is ReadyForQuery outside a transaction, which is where a
// transaction-mode client without a server is (also local's answer).
var readyIdle = []byte{'Z', 0, 0, 0, 5, 'I'}

// answerCancelled answers the message whose wait a cancel ended, on the
// client goroutine: a Query or function call fails and is over; an
// extended-protocol message fails and the rest up to the Sync is dropped
// (skipLocally); a Sync alone had nothing to cancel.
func (s *session) answerCancelled(typ byte) error {
	s.p.cancelledWaits.Add(1)
	switch typ {
	case 'S':
		s.answered = false
		s.cw.Write(readyIdle)
	case 'Q', 'F':
		s.cw.Write(cancelledError)
		s.cw.Write(readyIdle)
	default:
		s.cw.Write(cancelledError)
		s.localSkip = true
	}
	return s.cw.Flush()
}

// skipLocally drops a message after a cancelled extended-protocol
// message, until the Sync, which gets its ReadyForQuery.
func (s *session) skipLocally(typ byte) error {
	if typ != 'S' {
		return nil
	}
	s.localSkip, s.answered = false, false
	s.cw.Write(readyIdle)
	return s.cw.Flush()
}

// cancelWait ends the session's wait for a server, if it waits, for a
// cancel request; true when it did (or will, on the loop).
func (s *session) cancelWait() bool {
	s.mu.Lock()
	if !s.waiting || s.srv != nil {
		s.mu.Unlock()
		return false
	}
	s.waitCancelled = true
	stop, loop := s.waitStop, s.waitLoop
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	if loop != nil {
		loop.Post(s.onLoop(s.onWaitCancel))
	}
	return true
}

// inTransit keeps the session waiting, as far as a cancel request is
// concerned, while a statement that needs a server passes from the loop
// to the goroutine that acquires one: a cancel in between is kept
// (waitCancelled) and acquire answers it instead of waiting.
func (s *session) inTransit(since time.Time) {
	s.mu.Lock()
	s.waiting, s.waitSince = true, since
	s.mu.Unlock()
}

// endTransit ends inTransit once the goroutine has handled the statement
// the loop passed it; acquire has ended the wait already unless the
// statement needed no server after all (its cancel is then moot).
func (s *session) endTransit() {
	s.returnSlot()
	s.mu.Lock()
	if s.waitStop == nil && s.waitLoop == nil {
		s.waiting, s.waitCancelled = false, false
	}
	s.mu.Unlock()
}

// onWaitCancel ends a wait on the loop that a cancel request ended, and
// hands the session to its goroutine, which answers (resume).
func (s *session) onWaitCancel() {
	s.mu.Lock()
	cancelled := s.waitCancelled
	s.mu.Unlock()
	ch := s.lp.waitCh
	if !cancelled || ch == nil || !s.lp.waitPool.CancelWait(ch) {
		return // granted meanwhile (onGranted saw the cancel), or the grant is on the way (it will)
	}
	s.endWait()
	s.cancelHeld = true
	s.handBack(backCancel, nil)
}

// returnSlot gives back a slot the loop was granted for the goroutine to
// connect in (onGranted) that went unused: the statement needed no
// server after all, or the session ends.
func (s *session) returnSlot() {
	if s.slot != nil {
		s.slot.ReturnSlot()
		s.slot = nil
	}
}
