// Loop: transaction mode's common case served on the event loop's thread, with no goroutine waking up.

package proxy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"time"

	"github.com/qpkit/qpkit/pkg/netloop"
	"github.com/qpkit/qpkit/pkg/pool"
)

// errNeedGoroutine is what lockServer returns on the loop when a server
// cannot be had without waiting (or without a settings replay): the
// message goes back to the session's goroutine untouched.
var errNeedGoroutine = errors.New("proxy: needs the session goroutine")

// errWaitServer is what lockServer returns on the loop when the session
// now waits there for a server (pool.WaitAsync); the message is held.
var errWaitServer = errors.New("proxy: waits for a server on the loop")

// heldMessage is a client message the loop read but handed back.
type heldMessage struct {
	typ       byte
	body, raw []byte
}

// loopState is a session's part on the event loop. The goroutine hands
// the session over (park) when it would otherwise block reading its
// client with nothing under way; from then on the loop thread alone
// touches the session's buffers until it hands it back (handBack), which
// it does for anything but a plain transaction: COPY, a pinned or paused
// client, a server that is not idle in the pool, a message larger than
// the buffers, an error.
type loopState struct {
	lc     *netloop.Conn // the client's adopted socket; nil: no loop
	back   chan error    // handBack to the parked goroutine
	inLoop bool          // loop thread: the session is the loop's
	rsrv   *pool.Conn    // the server being relayed on the loop
	rsock  *netloop.Conn // its socket
	// streamed counts the DataRow bytes of the answer being relayed;
	// past streamAfter the server socket gets a low-water mark (lowat).
	streamed int
	lowat    bool
	// flushEnd: the batch just served ended with a Flush that went to the
	// server, so its answer ends when the queue empties, with no
	// ReadyForQuery (postgres.js describes a statement that way first).
	flushEnd bool
	evs      []QueryEvent // completed statements not yet observed
	// obs are statements whose answers the loop sends at the end of its
	// round of events; OnQuery sees them after that (RunDeferred). Loop
	// thread only, also after a hand-back.
	obs      []QueryEvent
	deferred bool    // RunDeferred is due
	body     []byte  // a server message being decoded
	hdr      [5]byte // and its header (a local would escape to the heap)
	held     *heldMessage
	// waitCh is set while the session waits on the loop for a server
	// (pool.WaitAsync), with the pool, the start and the timeout's timer.
	waitCh    chan *pool.Conn
	waitPool  *pool.Pool
	waitStart time.Time
	waitTimer *time.Timer
	// mustRead: the loop met the client's end (or an error) reading; the
	// goroutine reads once before parking again, and meets it too.
	mustRead bool
	// off: the pool's servers are not on the loop (TLS to the server):
	// the session stays with its goroutine.
	off bool
	// prefer tells the pool which servers are already on this loop.
	prefer func(*pool.Conn) bool
	// free: the session was started on the loop (loopaccept.go) and no
	// goroutine waits for it; the first hand-back starts one.
	free bool
}

type clientSide struct{ s *session }
type serverSide struct{ s *session }

func (h clientSide) Ready(*netloop.Conn) { h.s.onClientReady() }
func (h serverSide) Ready(*netloop.Conn) { h.s.onServerReady() }

func (h clientSide) Panicked(_ *netloop.Conn, v any) { h.s.loopPanicked(v) }
func (h serverSide) Panicked(_ *netloop.Conn, v any) { h.s.loopPanicked(v) }

// onLoop runs f, posted to the loop for the session, recovering its
// panic as the loop does for the handlers.
func (s *session) onLoop(f func()) func() {
	return func() {
		defer func() {
			if v := recover(); v != nil {
				s.loopPanicked(v)
			}
		}()
		f()
	}
}

// loopPanicked ends a session whose code panicked on the loop thread, as
// run's recover does on a goroutine: the goroutine tells the client
// "internal error" and end discards a server left mid-answer. The loop
// and every other session go on.
func (s *session) loopPanicked(v any) {
	s.p.log.Warn("proxy: session panicked on the event loop", "addr", s.addr, "panic", v)
	if !s.lp.inLoop {
		return // already handed back: the goroutine has it
	}
	s.lp.held = nil
	s.handBack(backPanic, &clientError{"XX000", "qprouter: internal error"})
}

// parkable reports whether the goroutine may hand the session to the loop:
// transaction mode, no server, nothing buffered or under way.
func (s *session) parkable() bool {
	if s.lp.mustRead {
		s.lp.mustRead = false
		return false
	}
	if s.lp.lc == nil || s.lp.off || s.fr.Buffered() > 0 || s.dirty != nil || s.answered {
		return false
	}
	select {
	case <-s.done:
	default:
		return false
	}
	s.mu.Lock()
	ok := s.rename && s.srv == nil && len(s.queue) == 0 && !s.reading && !s.pinned &&
		!s.clientCopying && !s.skipping && !s.localSkip && !s.ending && s.txStatus == 'I'
	s.mu.Unlock()
	// No server goroutine runs now (no server, none reading, the last
	// one done), so the client's writer is this goroutine's to look at.
	return ok && s.cw.Buffered() == 0
}

// park hands the session to the loop and waits until it comes back; a
// message the loop read and could not serve is then handled first.
func (s *session) park() error {
	lc := s.lp.lc
	lc.Loop().Post(s.onLoop(func() {
		s.lp.inLoop = true
		lc.SetHandler(clientSide{s})
		s.onClientReady()
	}))
	return s.resume(<-s.lp.back)
}

// resume takes the session back from the loop, which handed it over
// with err: a message the loop read and could not serve is handled first.
func (s *session) resume(err error) error {
	if err != nil {
		return err
	}
	if m := s.lp.held; m != nil {
		s.lp.held = nil
		defer s.endTransit()
		if s.cancelHeld {
			s.cancelHeld = false
			return s.answerCancelled(m.typ)
		}
		return s.handle(m.typ, m.body, m.raw)
	}
	return nil
}

// handBack returns the session to its goroutine, on the loop thread, for
// the reason why.
func (s *session) handBack(why backReason, err error) {
	s.p.handBacks[why].Add(1)
	s.leaveLoop()
	if s.lp.free {
		// Started on the loop, the session has no goroutine yet.
		s.lp.free = false
		go s.p.runFromLoop(s, true, true, err)
		return
	}
	s.lp.back <- err
}

// leaveLoop takes the session's sockets off the loop's handlers.
func (s *session) leaveLoop() {
	s.dropServerSock()
	s.lp.lc.SetHandler(nil)
	s.lp.inLoop = false
	if len(s.lp.evs) > 0 {
		s.observe(s.lp.evs)
		s.lp.evs = s.lp.evs[:0]
	}
}

// observeLater gives the statements just answered to OnQuery once the
// loop has sent this round's writes (with an io_uring they wait for the
// end of the round): the client has its answer before a slow hook runs.
func (s *session) observeLater() {
	if len(s.lp.evs) == 0 {
		return
	}
	s.lp.obs = append(s.lp.obs, s.lp.evs...)
	s.lp.evs = s.lp.evs[:0]
	if !s.lp.deferred {
		s.lp.deferred = true
		s.lp.lc.Loop().Defer(s)
	}
}

// RunDeferred is observeLater's second half, on the loop thread.
func (s *session) RunDeferred() {
	s.lp.deferred = false
	s.observe(s.lp.obs)
	clear(s.lp.obs)
	s.lp.obs = s.lp.obs[:0]
}

// terminateOnLoop ends, on the loop, a session that never had a
// goroutine when the client leaves idle (a Terminate at the front of
// what it sent, or the end of its stream: eof), as run and end would:
// a client that connects for one transaction then never wakes one.
// False when the goroutine must do it.
func (s *session) terminateOnLoop(eof bool) bool {
	if !s.lp.free || s.lp.waitCh != nil || s.cw.Buffered() > 0 {
		return false
	}
	if !eof {
		buf, _ := s.br.Peek(s.br.Buffered())
		if len(buf) < 5 || buf[0] != 'X' || binary.BigEndian.Uint32(buf[1:5]) != 4 {
			return false
		}
	}
	if !s.cmu.TryLock() {
		return false // a cancel is being delivered: end waits for it
	}
	s.cmu.Unlock()
	s.mu.Lock()
	idle := s.srv == nil && len(s.queue) == 0 && !s.reading && !s.pinned && !s.clientCopying && s.txStatus == 'I'
	if idle {
		s.ending = true
	}
	s.mu.Unlock()
	if !idle {
		return false
	}
	s.lp.free = false
	s.leaveLoop()
	if s.pool != nil {
		s.pool.Leave()
	}
	s.p.closeSession(s)
	s.p.loopEnds.Add(1)
	s.p.wg.Done()
	return true
}

// onClientReady serves the client's complete messages, up to its last
// Sync or Query, while no answer is being relayed.
func (s *session) onClientReady() {
	if !s.lp.inLoop {
		return
	}
	if s.lp.waitCh != nil {
		// Waiting for a server: a client that went away (Shutdown closes
		// them) stops waiting, unless its server is already on the way.
		if s.lp.lc.Closed() && s.lp.waitPool.CancelWait(s.lp.waitCh) {
			s.endWait()
			s.lp.held = nil
			s.lp.mustRead = true
			s.handBack(backClientEnd, nil)
		}
		return
	}
	if s.lp.rsrv != nil {
		// Relaying: the client's socket drained, or it sent more (read
		// when the answer is through).
		if s.lp.lc.Pending() == 0 && s.relayOnLoop() {
			s.onClientReady()
		}
		return
	}
	for {
		if s.lp.lc.Pending() > 0 {
			return // the client is not reading: wait until it drains
		}
		n, ok := s.scanBatch()
		if !ok {
			if !s.terminateOnLoop(false) {
				s.handBack(backMessage, nil)
			}
			return
		}
		if n == 0 {
			if s.br.Buffered() == s.br.Size() {
				s.handBack(backLarge, nil) // a message larger than the buffer
				return
			}
			_, err := s.br.Peek(s.br.Buffered() + 1)
			if err == netloop.ErrWouldBlock {
				return
			}
			if err == io.EOF && s.br.Buffered() == 0 && s.terminateOnLoop(true) {
				return
			}
			if err != nil && err != bufio.ErrBufferFull {
				s.lp.mustRead = true
				s.handBack(backClientEnd, nil) // the goroutine reads the end itself
				return
			}
			continue
		}
		if !s.serveMessages(n) || !s.afterBatch() {
			return
		}
	}
}

// serveMessages handles the next n client messages, all buffered, or
// those before a fence (fence.go). It returns false when the session went
// back to its goroutine or waits for a server.
func (s *session) serveMessages(n int) bool {
	s.lp.flushEnd = false
	for range n {
		next, _ := s.br.Peek(min(5, s.br.Buffered()))
		if len(next) == 5 {
			// the whole message, for the names it reads (fence.go)
			if m := 1 + int(binary.BigEndian.Uint32(next[1:])); m > 5 && m <= s.br.Buffered() {
				next, _ = s.br.Peek(m)
			}
		}
		s.mu.Lock()
		wait := s.rename && len(next) >= 5 && s.mustWait(next[0], next[5:])
		s.mu.Unlock()
		if wait {
			s.p.fenceWaits.Add(1)
			// The rest waits for the answers so far (fence.go): relayed
			// by afterBatch, then read again from the buffer.
			return true
		}
		typ, body, err := s.fr.Next()
		s.counted()
		if err != nil {
			s.handBack(backClientEnd, nil)
			return false
		}
		s.lp.flushEnd = typ == 'H'
		if err := s.handle(typ, body, s.fr.Message()); err != nil {
			why := backError
			if err == errNeedGoroutine || err == errWaitServer {
				raw := s.fr.Message()
				s.lp.held = &heldMessage{typ: typ, body: append([]byte(nil), body...), raw: append([]byte(nil), raw...)}
				if err == errWaitServer {
					return false
				}
				s.inTransit(time.Now())
				why, err = backServer, nil
			}
			s.handBack(why, err)
			return false
		}
	}
	return true
}

// afterBatch sends what the batch produced and relays the answer. It
// returns true when the session is idle again and the client may be read.
func (s *session) afterBatch() bool {
	if s.answered {
		s.mu.Lock()
		if s.srv == nil {
			s.cw.Flush()
		}
		s.mu.Unlock()
	}
	if err := s.flushServer(); err != nil {
		s.handBack(backFailure, err)
		return false
	}
	return s.startRelayOnLoop()
}

// waitServer queues the session for pl's next free server on the loop;
// false when it should take the goroutine's way (Acquire).
func (s *session) waitServer(pl *pool.Pool) bool {
	loop := s.lp.lc.Loop()
	var ch chan *pool.Conn
	ch = pl.WaitAsync(func() { loop.Post(s.onLoop(func() { s.onGranted(ch) })) }, s.lp.prefer)
	if ch == nil {
		return false
	}
	s.lp.waitCh, s.lp.waitPool, s.lp.waitStart = ch, pl, time.Now()
	s.lp.waitTimer = time.AfterFunc(pl.Config().AcquireTimeout, func() { loop.Post(s.onLoop(func() { s.onWaitTimeout(ch) })) })
	s.mu.Lock()
	s.waiting, s.waitSince, s.waitLoop = true, s.lp.waitStart, loop
	s.mu.Unlock()
	return true
}

// endWait ends the wait on ch, on the loop thread; cancelled says a
// cancel request came for it.
func (s *session) endWait() (pl *pool.Pool, cancelled bool) {
	pl = s.lp.waitPool
	s.lp.waitTimer.Stop()
	s.lp.waitCh, s.lp.waitPool, s.lp.waitTimer = nil, nil, nil
	s.mu.Lock()
	cancelled = s.waitCancelled
	s.waiting, s.waitLoop, s.waitCancelled = false, nil, false
	s.mu.Unlock()
	return pl, cancelled
}

// onGranted takes the server (or slot) the pool handed the waiting
// session and serves the held message and the rest of its batch.
func (s *session) onGranted(ch chan *pool.Conn) {
	if s.lp.waitCh != ch {
		return
	}
	srv := <-ch
	pl, cancelled := s.endWait()
	// The wait is reported once: here when the loop keeps the server or
	// the cancel ends it, else by the goroutine's acquire, which carries
	// on with it (from inTransit's start) and knows how it ended.
	if cancelled { // granted as a cancel request came: unused
		if s.p.opts.OnAcquire != nil {
			s.p.opts.OnAcquire(pl.Name(), time.Since(s.lp.waitStart), errWaitCancelled)
		}
		if srv == nil {
			pl.ReturnSlot()
		} else {
			pl.Release(srv)
		}
		s.cancelHeld = true
		s.handBack(backCancel, nil)
		return
	}
	if srv == nil {
		// Connecting blocks: the goroutine connects, in this slot, rather
		// than queueing again at the back (acquire).
		s.slot = pl
		s.inTransit(s.lp.waitStart)
		s.handBack(backServer, nil)
		return
	}
	if !s.loopTake(srv) {
		pl.Release(srv)
		s.inTransit(s.lp.waitStart)
		s.handBack(backServer, nil)
		return
	}
	if s.p.opts.OnAcquire != nil {
		s.p.opts.OnAcquire(pl.Name(), time.Since(s.lp.waitStart), nil)
	}
	s.attach(srv)
	m := s.lp.held
	s.lp.held = nil
	if err := s.handle(m.typ, m.body, m.raw); err != nil {
		s.handBack(backError, err)
		return
	}
	n, ok := s.scanBatch()
	if !ok {
		s.handBack(backMessage, nil)
		return
	}
	if s.serveMessages(n) && s.afterBatch() {
		s.onClientReady()
	}
}

// onWaitTimeout fails the waiting session as Acquire's timeout does.
func (s *session) onWaitTimeout(ch chan *pool.Conn) {
	if s.lp.waitCh != ch || !s.lp.waitPool.CancelWait(ch) {
		return // served meanwhile, or its grant is on the way
	}
	pl, _ := s.endWait()
	s.lp.held = nil
	err := pl.TimeoutError()
	if s.p.opts.OnAcquire != nil { // the longest waits count too
		s.p.opts.OnAcquire(pl.Name(), time.Since(s.lp.waitStart), err)
	}
	s.handBack(backTimeout, &clientError{"53300", "qprouter: " + err.Error()})
}

// scanBatch counts the complete buffered client messages up to and
// including the last Sync, Query or Flush. ok is false for anything the loop
// leaves to the goroutine: another message type or a bad length.
func (s *session) scanBatch() (n int, ok bool) {
	buf, _ := s.br.Peek(s.br.Buffered())
	i, count := 0, 0
	for i+5 <= len(buf) {
		typ := buf[i]
		l := int(binary.BigEndian.Uint32(buf[i+1 : i+5]))
		if l < 4 || l-4 > s.p.opts.MaxMessage {
			return 0, false
		}
		switch typ {
		case 'Q', 'P', 'B', 'D', 'E', 'C', 'S', 'H':
		default:
			return 0, false
		}
		if i+1+l > len(buf) {
			break
		}
		i += 1 + l
		count++
		if typ == 'S' || typ == 'Q' || typ == 'H' {
			n = count
		}
	}
	return n, true
}

// loopAcquire takes an idle server for the session without waiting, or
// nil (see loopTake).
func (s *session) loopAcquire(pl *pool.Pool) *pool.Conn {
	if s.p.pausing.Load() {
		return nil
	}
	srv := pl.TryAcquire(s.lp.prefer)
	if srv == nil {
		return nil
	}
	if !s.loopTake(srv) {
		pl.Release(srv)
		return nil
	}
	if s.p.opts.OnAcquire != nil {
		s.p.opts.OnAcquire(pl.Name(), 0, nil)
	}
	return srv
}

// loopTake reports whether srv can serve the session on the loop: it
// needs no settings replay and is polled by the same loop. Its socket's
// readiness then comes to the session, so that writes to it never block
// the loop.
func (s *session) loopTake(srv *pool.Conn) bool {
	sst, _ := srv.State.(*serverState)
	rs, _ := srv.Raw.(*netloop.Conn)
	if rs == nil {
		s.lp.off = true // not adopted: none of this pool's servers will be
		return false
	}
	if sst == nil || sst.varsKey != s.varsKey || srv.R.Buffered() > 0 || s.welcomeDiffers(srv) {
		return false
	}
	if rs.Loop() != s.lp.lc.Loop() {
		// Polled by another loop: this one takes it over (two epoll_ctl
		// calls; the pool prefers servers already here).
		if err := rs.MoveTo(s.lp.lc.Loop()); err != nil {
			return false
		}
	}
	s.lp.rsock = rs
	rs.SetHandler(serverSide{s})
	return true
}

// startRelayOnLoop relays the answers to what was just sent when they
// end in ReadyForQuery, or with the last answer expected after a Flush,
// and nothing else needs the goroutine (the conditions of relayInline). It returns true when the session is idle
// again and the client may be read.
func (s *session) startRelayOnLoop() bool {
	s.mu.Lock()
	srv := s.srv
	if srv == nil || len(s.queue) == 0 {
		s.mu.Unlock()
		return true
	}
	last := s.queue[len(s.queue)-1].kind
	if (last != kSync && last != kQuery && !s.lp.flushEnd) || s.pinned || s.clientCopying || s.reading {
		s.mu.Unlock()
		s.handBack(backRelay, nil) // the goroutine's relayInline takes it from here
		return false
	}
	initial := s.initial
	s.initial = nil
	s.mu.Unlock()
	if s.lp.rsock == nil { // not acquired on the loop
		s.mu.Lock()
		s.initial = initial
		s.mu.Unlock()
		s.handBack(backRelay, nil)
		return false
	}
	if len(initial) > 0 {
		s.cw.Write(initial)
	}
	s.lp.rsrv = srv
	return s.relayOnLoop()
}

func (s *session) onServerReady() {
	if s.lp.inLoop && s.lp.rsrv != nil && s.relayOnLoop() {
		s.onClientReady()
	}
}

// relayOnLoop relays the server's complete buffered messages as relay
// does, reading without waiting. It returns true when the answer is
// through and the session is idle (the server released or kept in a
// transaction), false when it waits for the server, waits for the client
// to drain, or handed the session back.
func (s *session) relayOnLoop() bool {
	srv := s.lp.rsrv
	for {
		if s.lp.lc.Pending() > 0 {
			return false
		}
		need := 5
		if b := srv.R.Buffered(); b >= 5 {
			hdr, _ := srv.R.Peek(5)
			size := int(binary.BigEndian.Uint32(hdr[1:])) - 4
			if size < 0 {
				s.failOnLoop(srv, "qprouter: malformed server message", true)
				return false
			}
			if 5+size > srv.R.Size() {
				s.endStream()
				s.handBack(backLongAnswer, nil) // a long message: relay passes it through
				return false
			}
			need = 5 + size
		}
		if srv.R.Buffered() < need {
			if s.cw.Buffered() > 0 {
				if err := s.cw.Flush(); err != nil {
					s.failOnLoop(srv, "", false)
					return false
				}
				if s.lp.lc.Pending() > 0 {
					return false
				}
			}
			if _, err := srv.R.Peek(need); err != nil {
				if err == netloop.ErrWouldBlock {
					return false
				}
				s.mu.Lock()
				ending := s.ending
				s.mu.Unlock()
				if !ending {
					s.p.log.Debug("proxy: server read", "pid", srv.PID, "err", err)
				}
				s.failOnLoop(srv, "qprouter: server connection lost", true)
				return false
			}
			continue
		}
		msg, _ := srv.R.Peek(need)
		typ := msg[0]
		if typ == 'D' || typ == 'd' {
			buf, _ := srv.R.Peek(srv.R.Buffered())
			n := sameTypeRun(buf, need, typ)
			s.cw.Write(buf[:n])
			srv.R.Discard(n)
			if s.lp.streamed += n; s.lp.streamed >= streamAfter && !s.lp.lowat {
				// A long answer: batch the server's 8 KiB writes.
				s.lp.lowat = s.lp.rsock.SetReadLowat(streamLowat) == nil
			}
			continue
		}
		hdr := &s.lp.hdr
		copy(hdr[:], msg)
		s.lp.body = append(s.lp.body[:0], msg[5:]...)
		body := s.lp.body
		srv.R.Discard(need)
		s.mu.Lock()
		act, release, ev, err := s.onServerLocked(typ, body, srv)
		flushed := s.lp.flushEnd && len(s.queue) == 0 && typ != 'Z'
		s.mu.Unlock()
		if err != nil {
			if err != errStatementMode {
				s.p.log.Warn("proxy: out of step with the server", "pid", srv.PID, "err", err)
			}
			s.failOnLoop(srv, "qprouter: "+err.Error(), true)
			return false
		}
		if ev != nil {
			s.lp.evs = append(s.lp.evs, *ev)
		}
		if len(s.runEvs) > 0 { // onServer's caller alone touches runEvs
			s.lp.evs = append(s.lp.evs, s.runEvs...)
			s.runEvs = s.runEvs[:0]
		}
		s.writeAnswer(act, hdr[:], body) // a failure shows at the flush
		if typ == 'G' || typ == 'W' {
			// COPY FROM STDIN: a server goroutine takes over, as relay does.
			s.cw.Flush()
			s.dropServerSock()
			s.mu.Lock()
			s.startReader()
			s.mu.Unlock()
			s.handBack(backCopy, nil)
			return false
		}
		if typ != 'Z' && !flushed {
			continue
		}
		if typ == 'Z' {
			s.p.loopTxns.Add(1)
		}
		s.endStream()
		if err := s.cw.Flush(); err != nil {
			s.failOnLoop(srv, "", false)
			return false
		}
		if release {
			s.dropServerSock()
			if s.cmu.TryLock() {
				s.cmu.Unlock()
				srv.Pool().Release(srv)
			} else {
				go func() { // a cancel under way is delivered first
					s.cmu.Lock()
					s.cmu.Unlock()
					srv.Pool().Release(srv)
				}()
			}
			s.observeLater()
			return true
		}
		s.mu.Lock()
		idle := len(s.queue) == 0
		keep := !s.pinned && !s.clientCopying && !s.ending && !s.p.isDraining()
		s.mu.Unlock()
		s.observeLater()
		if !idle {
			continue // more Syncs of a pipeline
		}
		// A transaction left open: the session keeps its server (and its
		// socket's readiness) for the next statement.
		s.lp.rsrv = nil
		if keep {
			return true
		}
		s.handBack(backKept, nil)
		return false
	}
}

// failOnLoop ends the relay after a failure, as serverFailed (server
// true) or clientFailed do, and hands the session back to end.
func (s *session) failOnLoop(srv *pool.Conn, msg string, server bool) {
	s.dropServerSock()
	if server {
		s.serverFailed(srv, msg)
	} else {
		s.clientFailed(srv)
	}
	s.handBack(backFailure, nil)
}

// endStream ends the count of an answer's rows and the server socket's
// low-water mark, which must not outlive the answer: the next one may be
// a single short row, and the server goes back to the pool.
func (s *session) endStream() {
	s.lp.streamed = 0
	if s.lp.lowat {
		s.lp.lowat = false
		s.lp.rsock.SetReadLowat(0)
	}
}

// dropServerSock takes the relayed server's socket off the loop.
func (s *session) dropServerSock() {
	if s.lp.rsock != nil {
		s.endStream()
		s.lp.rsock.SetHandler(nil)
	}
	s.lp.rsock, s.lp.rsrv = nil, nil
}

// A relayed answer past streamAfter bytes of rows has its server socket
// wake the loop once per streamLowat bytes (netloop's SetReadLowat):
// PostgreSQL writes 8 KiB at a time, and a wake-up per write was most of
// the loop's time on a long answer. The answer's tail then waits up to a
// millisecond for the loop's tick, so answers under 1 MiB (8 ms or less
// through the proxy here) never get the mark.
const (
	streamAfter = 1 << 20
	streamLowat = 64 << 10
)
