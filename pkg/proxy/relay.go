// Relay: reading one server connection's answers and writing them to the client, in the server goroutine or inline.

package proxy

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/qpkit/qpkit/pkg/pool"
)

// serverLoop relays srv's messages to the client until the session lets
// srv go (transaction mode, at ReadyForQuery 'I'), the session ends, or
// either side fails. It starts writing only after prev is closed, so the
// previous server's last messages reach the client first.
func (s *session) serverLoop(srv *pool.Conn, prev <-chan struct{}, done chan<- struct{}, initial []byte) {
	defer close(done)
	defer func() {
		s.mu.Lock()
		s.reading = false
		s.mu.Unlock()
	}()
	<-prev
	s.relay(srv, initial, false)
}

// relay writes srv's messages to the client. It returns false when srv
// went back to the pool or either side failed (the client is then
// closed), and true, inline, once nothing more is expected from srv
// (ReadyForQuery with nothing outstanding), srv staying the session's.
func (s *session) relay(srv *pool.Conn, initial []byte, inline bool) (kept bool) {
	s.mu.Lock()
	s.relayGo = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.relayGo = false
		s.mu.Unlock()
	}()
	defer func() {
		if r := recover(); r != nil {
			s.p.log.Warn("proxy: relay panicked", "client", s.addr, "panic", r)
			s.serverFailed(srv, "qprouter: internal error")
			kept = false
		}
	}()
	// Completed statements go to OnQuery once the client has its answer
	// and the server is back in the pool: digests and metrics stay off
	// the round trip.
	var evBuf [4]QueryEvent
	evs := evBuf[:0]
	defer func() { s.observe(evs) }()
	if len(initial) > 0 {
		if _, err := s.cw.Write(initial); err != nil {
			s.clientFailed(srv)
			return false
		}
	}
	var hdr [5]byte
	var body []byte
	for {
		// Whatever the client is owed goes out before waiting on the
		// server: a message cut by the server's send buffer (nearly every
		// 8 kB chunk of rows ends inside one) must not hold back the
		// complete ones before it.
		if srv.R.Buffered() < len(hdr) && !s.flushClient(srv) {
			return false
		}
		if s.stalling.Load() {
			// A timeout stopped the relay (timeOut): it ends at this
			// message boundary with the FATAL, forwarding nothing more of
			// the server's (the cancel's error, a ReadyForQuery) after it.
			s.serverFailed(srv, "")
			return false
		}
		n, err := io.ReadFull(srv.R, hdr[:])
		if err != nil {
			s.mu.Lock()
			ending := s.ending
			if ending && n == 0 && errors.Is(err, os.ErrDeadlineExceeded) {
				s.stopClean = true
			}
			s.mu.Unlock()
			if !ending {
				s.p.log.Debug("proxy: server read", "pid", srv.PID, "err", err)
				s.serverFailed(srv, "qprouter: server connection lost")
			}
			return false
		}
		typ := hdr[0]
		size := int(binary.BigEndian.Uint32(hdr[1:])) - 4
		if size < 0 {
			s.serverFailed(srv, "qprouter: malformed server message")
			return false
		}
		if typ == 'D' || typ == 'd' {
			// Rows and COPY data pass through undecoded: this message and
			// the complete ones of its type buffered behind it, in one
			// write, without copying them out of the reader.
			if srv.R.Buffered() >= size {
				buf, _ := srv.R.Peek(srv.R.Buffered())
				n := sameTypeRun(buf, size, typ)
				s.cw.Write(hdr[:])
				if _, err := s.cw.Write(buf[:n]); err != nil {
					s.clientFailed(srv)
					return false
				}
				srv.R.Discard(n)
				continue
			}
			if _, err := s.cw.Write(hdr[:]); err != nil {
				s.clientFailed(srv)
				return false
			}
			if !s.passThrough(srv, size) {
				return false
			}
			continue
		}
		if cap(body) < size {
			body = make([]byte, size)
		}
		body = body[:size]
		if srv.R.Buffered() < size && !s.flushClient(srv) {
			return false
		}
		if _, err := io.ReadFull(srv.R, body); err != nil {
			s.serverFailed(srv, "qprouter: server connection lost")
			return false
		}
		s.mu.Lock()
		act, release, ev, err := s.onServerLocked(typ, body, srv)
		s.mu.Unlock()
		if err != nil {
			if err != errStatementMode {
				s.p.log.Warn("proxy: out of step with the server", "pid", srv.PID, "err", err)
			}
			s.serverFailed(srv, "qprouter: "+err.Error())
			return false
		}
		if ev != nil {
			evs = append(evs, *ev)
		}
		if len(s.runEvs) > 0 { // onServer's caller alone touches runEvs
			evs = append(evs, s.runEvs...)
			s.runEvs = s.runEvs[:0]
		}
		if len(evs) >= maxHeldEvents { // a long pipeline without Sync
			s.observe(evs)
			evs = evs[:0]
		}
		if err := s.writeAnswer(act, hdr[:], body); err != nil {
			s.clientFailed(srv)
			return false
		}
		if inline && (typ == 'G' || typ == 'W') {
			// COPY FROM STDIN: the server now waits for the client, whose
			// goroutine must go back to reading it; a reader takes over.
			if !s.flushClient(srv) {
				return false
			}
			s.mu.Lock()
			s.startReader()
			s.mu.Unlock()
			return true
		}
		if typ == 'Z' {
			if !s.flushClient(srv) {
				return false
			}
			if release {
				s.cmu.Lock() // a cancel under way is delivered first
				s.cmu.Unlock()
				s.wmu.Lock() // the client goroutine's write has returned
				s.wmu.Unlock()
				srv.Pool().Release(srv)
				return false // the deferred observe runs after the release
			}
			s.mu.Lock()
			draining := s.ending || s.p.isDraining()
			idle := s.settled()
			s.mu.Unlock()
			if draining && idle {
				s.client.Conn.Close() // Shutdown: the transaction is over
			}
			s.observe(evs)
			evs = evs[:0]
			if inline {
				s.mu.Lock()
				idle := len(s.queue) == 0
				s.mu.Unlock()
				if idle {
					return true
				}
			}
		}
	}
}

// writeAnswer writes a decoded server message to the client as onServer's
// act says.
func (s *session) writeAnswer(act int, hdr, body []byte) error {
	var err error
	switch act {
	case forward:
		if _, err = s.cw.Write(hdr); err == nil {
			_, err = s.cw.Write(body)
		}
	case asParseComplete:
		_, err = s.cw.Write([]byte{'1', 0, 0, 0, 4})
	case renameError:
		_, err = s.cw.Write(s.errBuf)
	}
	return err
}

// sameTypeRun returns where the run of complete messages of type typ
// that starts at buf[from] ends (from itself when none does).
func sameTypeRun(buf []byte, from int, typ byte) int {
	n := from
	for n+5 <= len(buf) && buf[n] == typ {
		l := int(binary.BigEndian.Uint32(buf[n+1 : n+5]))
		if l < 4 || n+1+l > len(buf) {
			break
		}
		n += 1 + l
	}
	return n
}

// isDraining takes no lock: callers may hold a session's mu (see
// Proxy.draining).
func (p *Proxy) isDraining() bool { return p.draining.Load() }

// serverFailed reports a lost server to the client (unless the server's
// own FATAL already did) and ends the session.
func (s *session) serverFailed(srv *pool.Conn, msg string) {
	s.mu.Lock()
	if s.srv == srv {
		s.srv = nil
	}
	told, killed := s.serverFatal, s.killed
	s.mu.Unlock()
	srv.Pool().Discard(srv)
	switch {
	case killed != nil: // query_timeout closed the server
		s.cw.Write(appendErrorResponse(nil, "FATAL", killed.code, killed.msg))
	case !told:
		s.cw.Write(appendErrorResponse(nil, "FATAL", "08006", msg))
	}
	s.cw.Flush()
	s.client.Conn.Close()
}

// clientFailed drops the server (its state is unknown) and the client.
func (s *session) clientFailed(srv *pool.Conn) {
	s.p.log.Debug("proxy: client write failed", "client", s.addr, "pid", srv.PID)
	s.mu.Lock()
	if s.srv == srv {
		s.srv = nil
	}
	s.mu.Unlock()
	srv.Pool().Discard(srv)
	s.client.Conn.Close()
}

// onServer updates the expected-answer queue for one server message, with
// s.mu held. It returns what to do with the message, whether srv goes
// back to the pool after it, and a completed statement for OnQuery.
// onServerLocked is onServer called with s.mu held: a panic in it
// unlocks s.mu on its way to the recovery, which fails the server and
// needs the lock (as planLocked).
func (s *session) onServerLocked(typ byte, body []byte, srv *pool.Conn) (act int, release bool, ev *QueryEvent, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.mu.Unlock()
			panic(r)
		}
	}()
	return s.onServer(typ, body, srv)
}

func (s *session) onServer(typ byte, body []byte, srv *pool.Conn) (act int, release bool, ev *QueryEvent, err error) {
	var head *entry
	if len(s.queue) > 0 {
		head = &s.queue[0]
	}
	want := func(kinds ...int) error {
		if head == nil {
			return fmt.Errorf("unexpected %q with nothing outstanding", typ)
		}
		for _, k := range kinds {
			if head.kind == k {
				return nil
			}
		}
		ks := make([]int, len(s.queue))
		for i, e := range s.queue {
			ks[i] = e.kind
		}
		return fmt.Errorf("unexpected %q (expected answers of kinds %v)", typ, ks)
	}
	switch typ {
	case '1':
		if err := want(kParse); err != nil {
			return 0, false, nil, err
		}
		if head.action == renameError {
			// The name was free after all: a Parse of it pipelined
			// before this one failed, and PostgreSQL took this one. The
			// server holds its text under the old statement's name: that
			// copy is forgotten (closed before its next Parse there), and
			// the client has the statement it parsed.
			s.forgetSkipped(head.errFrom)
			if head.fresh != nil {
				s.stmts[head.errTo] = head.fresh
			}
			s.pop()
			break
		}
		act = head.action
		s.pop()
	case '2':
		if err := want(kBind); err != nil {
			return 0, false, nil, err
		}
		s.pop()
	case '3':
		if err := want(kClose); err != nil {
			return 0, false, nil, err
		}
		act = head.action
		s.pop()
	case 'T', 'n':
		if head != nil && head.kind == kDescribe {
			s.pop()
		}
	case 'C', 'I', 's':
		var rows int64
		var cmd []byte
		if typ == 'C' {
			cmd, rows = tagRows(body)
			if head != nil && len(head.ops) > 0 {
				s.ran(head, cmd)
			} else if settingsTag(cmd) && s.rename {
				s.unsureVars = true // a statement about settings the text matching missed
			}
		} else if typ == 's' && head != nil && len(head.ops) > 0 {
			// A portal suspended after some rows: its statement (a SELECT
			// calling set_config) has run as far as those rows, which is
			// enough to have changed the setting.
			s.ran(head, nil)
		}
		if head != nil && head.kind == kQuery {
			head.rows += rows
			if head.stmtsBefore != nil && typ == 'C' && droppedAll(body) {
				head.stmtsBefore = nil // it ran: the statements are gone
			}
			break
		}
		if err := want(kExecute); err != nil {
			return 0, false, nil, err
		}
		if typ == 's' {
			// A portal read in pieces (a fetch size) is one statement,
			// counted once with all its rows, as pg_stat_statements
			// counts it: the event comes with its last piece.
			s.suspended(head)
			s.pop()
			break
		}
		if typ == 'C' && s.rename && droppedAll(body) {
			// DEALLOCATE ALL or DISCARD ALL through the extended protocol
			// (JDBC sends every statement so): the server has dropped
			// every statement, other clients' too, and the client has
			// none left.
			s.sst.stmts.Purge()
			s.sst.unsure = true
			for name, st := range head.dropsAll {
				if s.stmts[name] == st { // not parsed again since
					delete(s.stmts, name)
				}
			}
		}
		rows = s.resumed(head, rows)
		ev = s.event(head, rows, "")
		s.pop()
	case 'E':
		if head != nil && head.probe {
			// The proxy's own Parse failed: the Query behind it decides.
			act = swallow
			s.skipToSync()
			break
		}
		code := errorCode(body)
		s.failed = true
		if sev := errorSeverity(body); sev == "FATAL" || sev == "PANIC" {
			s.serverFatal = true
		}
		if s.p.log.Enabled(context.Background(), slog.LevelDebug) {
			s.p.log.Debug("proxy: server error", "client", s.addr, "pid", srv.PID, "code", code, "msg", pool.ParseError(body).Message)
		}
		if head == nil {
			break // an asynchronous error (FATAL at shutdown); the server closes next
		}
		if head.errTo != "" {
			act = renameError
			s.errBuf = appendMsg(s.errBuf[:0], 'E', bytes.ReplaceAll(body, []byte(`"`+head.errFrom+`"`), []byte(`"`+head.errTo+`"`)))
		}
		if head.unnamed && head.errFrom != "" {
			// a cached unnamed statement: named as PostgreSQL names the unnamed one
			from, to := `"`+head.errFrom+`"`, `""`
			if code == "26000" { // its Parse failed
				from, to = `prepared statement `+from, `unnamed prepared statement`
			}
			act = renameError
			s.errBuf = appendMsg(s.errBuf[:0], 'E', bytes.ReplaceAll(body, []byte(from), []byte(to)))
		}
		if head.kind == kQuery {
			if head.code == "" {
				head.code = code
			}
			break
		}
		var sent int64
		if head.kind == kExecute {
			sent = s.resumed(head, 0) // a portal read in pieces keeps the rows it sent
		}
		if head.kind == kExecute || (head.kind == kParse || head.kind == kBind) && head.sql != "" {
			// A statement that fails at its Parse or Bind (a missing
			// table, a bad parameter) counts as an error of its text, as
			// the same failure through a simple Query does.
			ev = s.event(head, sent, code)
		}
		if head.kind == kBind && head.stmt != nil && code == "0A000" {
			// "cached plan must not change result type": a table changed
			// under the server's statement. Parse it afresh when a client
			// next parses it.
			s.sst.stale(head.stmt.server, s.p.stmtSeq.Add(1))
		}
		s.skipToSync()
	case 'A':
		// A notification the client's own session sent carries its
		// backend's PID; the client knows the proxy's key instead, and
		// compares with it to skip its own (PostgreSQL's NOTIFY docs).
		if len(body) >= 4 && binary.BigEndian.Uint32(body) == srv.PID && s.client.Key.PID != srv.PID {
			binary.BigEndian.PutUint32(body, s.client.Key.PID)
		}
	case 'Z':
		if err := want(kSync, kQuery); err != nil {
			return 0, false, nil, err
		}
		if len(body) != 1 {
			return 0, false, nil, errors.New("malformed ReadyForQuery")
		}
		if head.probe {
			act = swallow // the Query it was sent for follows
			s.txStatus = body[0]
			s.pop()
			break
		}
		if head.action == swallow {
			act = swallow // the Sync behind a failed COPY's end (plan)
		}
		if head.kind == kQuery {
			ev = s.event(head, head.rows, head.code)
			if head.code != "" {
				s.undrop(head)
			}
			if head.stmtsBefore != nil {
				// DEALLOCATE ALL or DISCARD ALL did not run (an error
				// before it, or only a comment naming it): PostgreSQL
				// kept the statements.
				s.giveBackAll(head.stmtsBefore)
			}
		}
		s.pop()
		if s.stmtMode && body[0] != 'I' && !s.pinned {
			// The client's transaction may not span statements.
			s.killed = errStatementMode
			return 0, false, nil, errStatementMode
		}
		s.txStatus = body[0]
		if len(s.queue) == 0 {
			s.copyEndsAhead = s.copyEndsAhead[:0] // no COPY under way
		}
		if body[0] == 'I' && len(s.runs) > 0 {
			// Portals suspended and never finished end with the
			// transaction: counted with the rows they sent.
			for _, r := range s.runs {
				s.endRun(r)
			}
			clear(s.runs)
		}
		if body[0] == 'I' {
			s.txEnded()
			if len(s.queue) == 0 && len(s.portals) > 0 {
				// PostgreSQL drops the portals when a transaction ends:
				// so does the proxy, when no message planned since (a
				// Bind pipelined ahead) made one for the next.
				clear(s.portals)
			}
		}
		s.endOfStatement()
		release = s.rename && s.settled() && !s.pinned && !s.ending && !s.clientCopying
		if release {
			s.srv = nil
		}
	case 'G', 'W':
		// A CopyDone sent ahead belongs to this COPY when it came after
		// the COPY's entry; one that came before was for a COPY that
		// failed before its CopyInResponse.
		for len(s.copyEndsAhead) > 0 && head != nil && s.copyEndsAhead[0] < head.seq {
			s.copyEndsAhead = s.copyEndsAhead[1:]
		}
		ahead := len(s.copyEndsAhead) > 0
		var copyEndSeq uint64
		if ahead {
			// the client's CopyDone is on its way already
			copyEndSeq, s.copyEndsAhead = s.copyEndsAhead[0], s.copyEndsAhead[1:]
		} else {
			s.clientCopying = true
		}
		if head != nil && head.kind == kExecute {
			// An extended-protocol COPY FROM STDIN: the Syncs sent behind
			// the Execute before the client's CopyDone reach the server
			// during the COPY, which ignores them; only one after the
			// CopyDone is answered.
			q := s.queue[:1]
			for _, e := range s.queue[1:] {
				if e.kind != kSync || (ahead && e.seq > copyEndSeq) {
					q = append(q, e)
				}
			}
			clear(s.queue[len(q):])
			s.queue = q
		}
	case 'S':
		name, value, ok := paramStatus(body)
		if ok {
			srv.SetParam(name, value)
			s.setView(name, value)
			s.viewKey = ""
			s.noteReported(name, value)
		}
	}
	return act, release, ev, nil
}

func paramStatus(body []byte) (name, value string, ok bool) {
	name, rest, ok := cstring(body)
	if !ok {
		return "", "", false
	}
	value, _, ok = cstring(rest)
	return name, value, ok
}

// pop drops the answered head of the queue.
func (s *session) pop() {
	if e := &s.queue[0]; e.opNext < len(e.ops) && e.kind == kQuery && e.code == "" {
		// A Query that succeeded with statements left over: its text was
		// split other than PostgreSQL split it.
		s.unsure(e)
	}
	s.queue[0] = entry{}
	s.queue = s.queue[1:]
	s.fenceReached()
}

// push adds an answer to expect. Popping moves queue's start forward, so
// an emptied queue starts again at the front of its array (qmem), not
// in a new one: a statement allocates nothing here.
func (s *session) push(e entry) {
	if len(s.queue) == 0 {
		s.queue = s.qmem[:0]
	}
	s.noteEntry(&e)
	q := s.queue
	s.queue = append(s.queue, e)
	if len(q) == 0 || cap(s.queue) != cap(q) { // s.queue is new or at its array's front
		s.qmem = s.queue[:0]
	}
}

// skipToSync drops the failed entry and everything before the next Sync,
// as the server does; statements whose Parse was skipped are forgotten
// and evictions that were skipped are remembered again.
func (s *session) skipToSync() {
	s.undoStatements()
	failed, restored := true, false
	// What the skipped messages did to the server's statement list is
	// undone newest first: an eviction in the run may have made room for
	// a statement only a skipped Parse put there, and must not bring it
	// back; undone after that Parse, it brings back only what the server
	// had before the run.
	type undo struct {
		name  string
		evict bool // an eviction's Close (else a Parse)
	}
	var undos []undo
	for len(s.queue) > 0 && s.queue[0].kind != kSync {
		e := s.queue[0]
		switch {
		case e.seq <= s.fc.uclear && (e.unnamed || e.prev > 0):
			// A Parse of the unnamed statement that began a later group,
			// already planned, decides the client's unnamed statement
			// (fence.go); only the server's list is put right.
			if e.kind == kParse && e.stmt != nil {
				undos = append(undos, undo{name: e.stmt.server})
			}
		case e.unnamed && e.stmt == nil && e.action == swallow:
			// ensureUnnamed's Parse or Close, failed or skipped: the
			// client's unnamed statement stays as it was, the server's
			// is not it
			s.unnamedLive = false
		case (e.kind == kParse && e.unnamed && e.stmt == nil || (e.kind == kQuery || e.kind == kClose) && e.prev > 0) && !failed:
			// skipped: PostgreSQL keeps the unnamed statement it had
			if !restored && e.prev > 0 {
				s.restoreUnnamed(e.prev)
				restored = true
			}
		case e.unnamed && e.stmt != nil && (e.kind == kParse || e.kind == kClose): // a cached unnamed statement's Parse, or the Close standing in
			if e.kind == kParse {
				undos = append(undos, undo{name: e.stmt.server})
			}
			if s.ucache == e.stmt {
				s.dropCachedUnnamed()
			}
			s.unnamedValid, s.unnamedLive = false, false
		case e.kind == kParse && e.unnamed:
			// failed or skipped: the server's unnamed statement is not the client's
			s.unnamedValid, s.unnamedLive = false, false
		case e.kind == kParse && e.stmt != nil:
			undos = append(undos, undo{name: e.stmt.server})
		case e.kind == kClose && e.evict != "":
			undos = append(undos, undo{name: e.evict, evict: true})
		}
		if failed && e.unnamed && (e.kind == kParse || e.kind == kClose) && e.action != swallow {
			restored = true // the Parse failed: the client has no unnamed statement
		}
		failed = false
		s.pop()
	}
	for i := len(undos) - 1; i >= 0; i-- {
		if u := undos[i]; u.evict {
			s.sst.stmts.Add(u.name, 0) // when it was parsed is lost: older than any statement
		} else {
			s.forgetSkipped(u.name)
		}
	}
	if len(s.queue) == 0 {
		s.skipping = true
	}
}

// forgetSkipped drops a statement whose Parse the server skipped or
// refused from what the proxy knows of the server. The server may still
// have it all the same: parsed by a message before the failure, with the
// Close that was to precede this Parse skipped too (closeFirst, an
// eviction). So the next Parse of it there closes it first.
func (s *session) forgetSkipped(name string) {
	s.sst.stmts.Remove(name)
	if _, marked := s.sst.closeBefore[name]; !marked {
		s.sst.stale(name, s.p.stmtSeq.Add(1))
	}
}

// undrop gives the client back the statement a DEALLOCATE that failed
// had it forget, unless it has parsed that name again meanwhile.
func (s *session) undrop(e *entry) {
	if st := e.before; st != nil && e.kind == kQuery {
		if _, taken := s.stmts[st.client]; !taken {
			s.stmts[st.client] = st
		}
	}
}

// giveBackAll gives the client back the statements a DEALLOCATE ALL or
// DISCARD ALL at the head of the queue made it forget, when it did not
// run. When nothing queued behind it changed a name they are simply put
// back. When the next change is another DEALLOCATE ALL or DISCARD ALL,
// that one decides: it carries them, to give them back in turn should it
// not run either. After any other change they stay forgotten
// (docs/qprouter.md): which names that change would have met is not known.
func (s *session) giveBackAll(before map[string]*stmt) {
	for i := 1; i < len(s.queue); i++ {
		e := &s.queue[i]
		if e.stmtName != "" {
			return
		}
		if e.stmtsBefore != nil {
			for name, st := range before {
				if _, ok := e.stmtsBefore[name]; !ok {
					e.stmtsBefore[name] = st
				}
			}
			return
		}
	}
	maps.Copy(s.stmts, before)
}

// droppedAll tells whether a CommandComplete body is that of DEALLOCATE
// ALL or DISCARD ALL.
func droppedAll(body []byte) bool {
	tag := bytes.TrimRight(body, "\x00")
	return string(tag) == "DEALLOCATE ALL" || string(tag) == "DISCARD ALL"
}

// extendedRun tells whether the queue ends in extended-protocol messages
// not yet followed by a Sync: a message planned now is skipped if one of
// them fails.
func (s *session) extendedRun() bool {
	n := len(s.queue)
	return n > 0 && s.queue[n-1].kind != kSync && s.queue[n-1].kind != kQuery
}

// undoStatements puts the client's named statements back as they were
// before the messages up to the next Sync, which PostgreSQL skips after an
// error: undone newest first, so that a name closed and parsed again in
// the skipped run gets the statement it had before the run.
func (s *session) undoStatements() {
	end := 0
	for end < len(s.queue) && s.queue[end].kind != kSync {
		end++
	}
	for i := end - 1; i >= 0; i-- {
		e := &s.queue[i]
		if e.stmtsBefore != nil {
			clear(s.stmts)
			maps.Copy(s.stmts, e.stmtsBefore)
		}
		if e.stmtName != "" {
			if e.before != nil {
				s.stmts[e.stmtName] = e.before
			} else {
				delete(s.stmts, e.stmtName)
			}
			if e.created != nil {
				s.neverCreated(end, e.stmtName, e.created, e.before)
			}
		}
	}
}

// neverCreated tells the entries queued behind the Sync at from (planned
// before the failure was known) that the statement created under name by
// a skipped Parse never existed: what they would give back under that
// name (a failed DEALLOCATE, one of ALL) is what the name had before.
func (s *session) neverCreated(from int, name string, created, before *stmt) {
	for j := from; j < len(s.queue); j++ {
		q := &s.queue[j]
		if q.stmtName == name && q.before == created {
			q.before = before
		}
		if q.stmtsBefore != nil && q.stmtsBefore[name] == created {
			if before != nil {
				q.stmtsBefore[name] = before
			} else {
				delete(q.stmtsBefore, name)
			}
		}
	}
}

// keepPending makes the pending settings the client's, and the server's.
func (s *session) keepPending() {
	restored := s.vars.apply(s.pending, s.start)
	s.varsKey = s.vars.key()
	s.sst.varsKey = s.varsKey
	if s.unsureVars || restored {
		// see unsure; or a RESET took the server to its own defaults
		// where the client's startup settings should be: it is set
		// again before the client's next transaction
		s.sst.varsKey = unknownVars
	}
}

// ran follows a CommandComplete of e, a Query or an Execute with setting
// changes or transaction control in its text: PostgreSQL answers a
// Query's statements in order, so the n-th CommandComplete is the n-th
// statement's, and only statements that completed count. A COMMIT keeps
// what is pending, a ROLLBACK drops it, a savepoint marks it, and
// ROLLBACK TO a savepoint drops what came after the mark.
func (s *session) ran(e *entry, tag []byte) {
	k := e.done
	e.done++
	followed := false
	for e.opNext < len(e.ops) && e.ops[e.opNext].idx <= k {
		op := e.ops[e.opNext]
		if op.idx < k || !op.fits(tag) {
			s.unsure(e)
			return
		}
		e.opNext++
		followed = true
		switch op.tx {
		case txIgnore:
		case txNone, txSavepoint: // a change, or a savepoint's mark
			s.pending = append(s.pending, op)
		case txRelease:
			if i := s.savepoint(op.key); i >= 0 {
				// it and the savepoints after it go; the changes stay
				rest := slices.DeleteFunc(s.pending[i:], func(o varOp) bool { return o.tx != txNone })
				s.pending = s.pending[:i+len(rest)]
			} else {
				s.unsureVars = true
			}
		case txRollbackTo:
			if i := s.savepoint(op.key); i >= 0 {
				s.pending = s.pending[:i+1]
			} else {
				s.unsureVars = true
			}
		case txCommit, txRollback:
			if op.tx == txCommit && string(tag) == "COMMIT" {
				s.keepPending()
			}
			s.pending = s.pending[:0]
		}
	}
	if !followed && settingsTag(tag) {
		s.unsureVars = true // a statement about settings the text matching missed
	}
}

// savepoint is where in pending the latest savepoint of that name is; -1
// if none.
func (s *session) savepoint(name string) int {
	for i := len(s.pending) - 1; i >= 0; i-- {
		if op := s.pending[i]; op.tx == txSavepoint && op.key == name {
			return i
		}
	}
	return -1
}

// unsure gives up matching e's statements with their answers: its
// setting changes still to come count as made, at face value, and the
// server's settings are taken as unknown until its transaction has ended
// (keepPending, endOfStatement), so that nothing a guess got wrong can
// reach the next client on it: that one gets RESET ALL and its own
// settings replayed.
func (s *session) unsure(e *entry) {
	for _, op := range e.ops[e.opNext:] {
		if op.tx == txNone {
			s.pending = append(s.pending, op)
		}
	}
	e.opNext = len(e.ops)
	s.unsureVars = true
}

// endOfStatement applies or drops pending settings at ReadyForQuery,
// when no COMMIT or ROLLBACK decided them before.
func (s *session) endOfStatement() {
	failed := s.failed
	s.failed = false
	if s.txStatus == 'T' || s.txStatus == 'E' {
		return // the transaction goes on
	}
	if len(s.pending) > 0 {
		if !failed {
			s.keepPending()
		} else {
			// The implicit transaction failed and took them with it.
			// Should a statement the proxy did not see as such have
			// committed them first, the server is not trusted either.
			s.sst.varsKey = unknownVars
		}
		s.pending = s.pending[:0]
	}
	if s.unsureVars {
		// The transaction is over: what the server has is a guess, so
		// the next client on it gets RESET ALL and its own settings.
		s.sst.varsKey = unknownVars
		s.unsureVars = false
	}
}

// maxHeldEvents bounds the statements a relay holds back from OnQuery
// until the next ReadyForQuery.
const maxHeldEvents = 64

// observe hands evs to OnQuery. A panic in the hook is logged and goes
// no further: it may run after the server went back to the pool, where
// relay's own recovery would fail a server that is no longer the session's.
func (s *session) observe(evs []QueryEvent) {
	if len(evs) == 0 {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			s.p.log.Warn("proxy: OnQuery panicked", "client", s.addr, "panic", r)
		}
	}()
	for i := range evs {
		s.p.opts.OnQuery(evs[i])
	}
}

// portalRun is a suspended portal's statement so far: the Bind that made
// the portal (portal.seq), the time its Executes took until their
// answers (not the client's time between them, which pg_stat_statements
// does not count either) and the rows sent.
type portalRun struct {
	sql   string
	named bool
	bind  uint64
	dur   time.Duration
	rows  int64
}

// suspended records a PortalSuspended answer to Execute e: e.maxRows rows
// were sent. A run of an earlier portal of that name (bound again since)
// ends as a statement of its own.
func (s *session) suspended(e *entry) {
	if s.p.opts.OnQuery == nil {
		return
	}
	if s.runs == nil {
		s.runs = make(map[string]portalRun)
	}
	r, ok := s.runs[e.portal]
	if ok && r.bind != e.bind {
		s.endRun(r)
		ok = false
	}
	if !ok {
		r = portalRun{sql: e.sql, named: e.named, bind: e.bind}
	}
	r.dur += time.Since(e.start)
	r.rows += e.maxRows
	s.runs[e.portal] = r
}

// resumed ends the run of e's portal, if it was suspended before: the
// run's time is added to e's (its start moved back by it) and its rows
// to rows. A run of an earlier portal of that name ends on its own.
func (s *session) resumed(e *entry, rows int64) int64 {
	r, ok := s.runs[e.portal]
	if !ok {
		return rows
	}
	delete(s.runs, e.portal)
	if r.bind != e.bind {
		s.endRun(r)
		return rows
	}
	e.start = e.start.Add(-r.dur)
	return rows + r.rows
}

// servingPool names the pool of the server the session has, else its
// own: a forced user's pool serves the statement, not the client's.
func (s *session) servingPool() string {
	if s.srv != nil {
		return s.srv.Pool().Name()
	}
	return s.poolName
}

// endRun counts a run whose portal went without finishing (bound again,
// closed, or ended with its transaction) as one statement with the rows
// it sent, as pg_stat_statements counts a portal when it is dropped. The
// event goes to runEvs, which onServer's caller observes.
func (s *session) endRun(r portalRun) {
	s.runEvs = append(s.runEvs, QueryEvent{SQL: r.sql, Duration: r.dur, Rows: r.rows, Pool: s.servingPool(), Prepared: r.named})
}

// event builds an OnQuery event when the hook is set.
func (s *session) event(e *entry, rows int64, code string) *QueryEvent {
	if s.p.opts.OnQuery == nil {
		return nil
	}
	name := s.servingPool()
	// Both callers of onServer copy the event before the next message.
	s.ev = QueryEvent{SQL: e.sql, Duration: time.Since(e.start), Rows: rows, SQLState: code, Pool: name, Prepared: e.named}
	return &s.ev
}

// flushClient sends the client what is buffered for it; on failure the
// client is closed and srv given up.
func (s *session) flushClient(srv *pool.Conn) bool {
	if s.cw.Buffered() == 0 {
		return true
	}
	if err := s.cw.Flush(); err != nil {
		s.clientFailed(srv)
		return false
	}
	return true
}

// passThrough copies the next size bytes, the rest of a message whose
// header is written, from srv to the client as they arrive, flushing
// before each wait on the server.
func (s *session) passThrough(srv *pool.Conn, size int) bool {
	for size > 0 {
		if srv.R.Buffered() == 0 {
			if !s.flushClient(srv) {
				return false
			}
			if _, err := srv.R.Peek(1); err != nil {
				if s.finishAfterTimeout(srv, err) {
					continue
				}
				s.serverFailed(srv, "qprouter: server connection lost")
				return false
			}
		}
		b, _ := srv.R.Peek(min(size, srv.R.Buffered()))
		if _, err := s.cw.Write(b); err != nil {
			s.clientFailed(srv)
			return false
		}
		srv.R.Discard(len(b))
		size -= len(b)
	}
	if s.finishing { // the row is whole: the timeout stops the relay now
		s.finishing = false
		srv.Net.SetReadDeadline(time.Unix(1, 0))
	}
	return true
}

// finishAfterTimeout tells whether the relay may read on after err, the
// past read deadline with which a timeout stopped it (session.relayGo)
// in the middle of a row it has begun to send: it reads the rest, for at
// most stalledClient, so that the client's FATAL follows a whole message.
func (s *session) finishAfterTimeout(srv *pool.Conn, err error) bool {
	if s.finishing || !errors.Is(err, os.ErrDeadlineExceeded) {
		return false
	}
	s.mu.Lock()
	stopped := s.killed != nil && s.srvClosed
	s.mu.Unlock()
	if !stopped {
		return false
	}
	s.finishing = true
	srv.Net.SetReadDeadline(time.Now().Add(stalledClient))
	return true
}

// errStatementMode ends a statement-mode client whose transaction would
// span statements, in PgBouncer's words.
var errStatementMode = &clientError{"08P01", "transaction blocks not allowed in statement pooling mode"}
