// Plan: what each client message becomes on its server (statements renamed per server, parsed again where missing, kept in an LRU) and the answers it makes the server send.

package proxy

import (
	"encoding/binary"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// entry kinds: what a forwarded message makes the server answer.
const (
	kParse    = iota // ParseComplete
	kBind            // BindComplete
	kDescribe        // [ParameterDescription] RowDescription|NoData
	kExecute         // ... CommandComplete|EmptyQueryResponse|PortalSuspended
	kClose           // CloseComplete
	kSync            // ReadyForQuery
	kQuery           // ... ReadyForQuery (simple Query and FunctionCall)
)

// entry actions on the answer.
const (
	forward = iota
	swallow
	asParseComplete // a dummy Close answering a Parse the server did not need
	renameError     // an ErrorResponse naming the server's statement: give the client's name
)

// entry is one expected answer.
type entry struct {
	kind   int
	action int
	stmt   *stmt     // Parse and Bind: the statement (renamed); eviction Close: the evicted one
	evict  string    // an eviction Close: the server name closed
	sql    string    // Query, Execute, and the client's Parse and Bind: text for OnQuery
	named  bool      // Execute of a named statement
	start  time.Time // Query, Execute, and the client's Parse and Bind: when forwarded
	rows   int64     // Query: rows so far
	code   string    // Query: first SQLSTATE
	// Parse (renameError) and Bind of a named statement: the server name
	// to replace by the client's in an ErrorResponse;
	// Bind and Describe of a cached unnamed statement: its server name
	errFrom, errTo string
	// Parse of the unnamed statement, or the Close standing in for it
	// (also ensureUnnamed's Parse or Close of it, action swallow);
	// Bind and Describe of a cached one (Options.CacheUnnamed)
	unnamed bool
	// prev is the client's unnamed statement before this unnamed Parse (or
	// a Query that may be skipped, which drops it), restored if the server
	// skips the message: session.uprev[prev-1] (0: none).
	prev int
	// ops: Query and Execute: the settings the statement changes, pending
	// from its answer on (pop), not from when it was sent: a client may
	// pipeline statements past a ReadyForQuery that decides the ones before.
	ops []varOp
	// done counts a Query's CommandCompletes (an Execute's one); opNext is
	// the first of ops not yet followed (session.ran).
	done, opNext int
	// stmtName and before: the client's named statement this entry's
	// message changed (a Parse, a Close, a Query's DEALLOCATE) and what the
	// client had under that name before, put back if PostgreSQL skips the
	// message (or fails the DEALLOCATE).
	stmtName string
	before   *stmt
	// created: the statement a Parse of a free name gave the client
	// (see neverCreated).
	created *stmt
	// stmtsBefore: the client's named statements before a Query dropped
	// them all (DEALLOCATE ALL, DISCARD ALL); nil once its answer shows
	// that it ran.
	stmtsBefore map[string]*stmt
	// dropsAll: an Execute of DEALLOCATE ALL or DISCARD ALL, the client's
	// named statements when it was planned: those it drops, if it runs
	// (not those parsed after it in the same pipeline).
	dropsAll map[string]*stmt
	// fresh: for a Parse of a name in use (renameError), the statement it
	// parses, the client's should the name turn out free after all (a
	// Parse of it pipelined before this one failed).
	fresh *stmt
	// probe: a Parse and its Sync that the proxy sends on its own, ahead
	// of a client's Query, answers and error alike kept from the client
	// (see session.probe).
	probe bool
	// portal and maxRows: an Execute's portal and row limit, which is
	// the number of rows sent when the portal is suspended (portalRun).
	portal  string
	bind    uint64 // the portal's portal.seq
	maxRows int64
	// seq numbers the entries in the order planned; ends: the answer
	// ends a Sync group, whatever fails before it (fence.go).
	seq  uint64
	ends bool
}

// stmt is a client's named prepared statement.
type stmt struct {
	client string // the client's name
	server string // qpr_<hash>
	query  string
	params []byte  // the parameter-type section of Parse, as sent
	ops    []varOp // settings the statement changes (transaction mode)
	born   uint64  // Proxy.stmtSeq when a client last parsed it
}

// serverState is what the proxy knows about a server connection.
type serverState struct {
	// stmts: the renamed statements it has, each with the Proxy.stmtSeq
	// of when it was parsed there (see serverHas)
	stmts   *simplelru.LRU[string, uint64]
	varsKey string // vars.key() of the settings applied
	// unsure is set once stmts was purged without knowing what the server
	// dropped: statements parsed there from then on are closed first.
	unsure bool
	// closeBefore names statements the server has but must parse afresh
	// for statements parsed by clients after they went stale (see stale),
	// with the Proxy.stmtSeq of that moment: closed first.
	closeBefore map[string]uint64
	// status is the welcome's ParameterStatus messages for the Params
	// whose ParamsKey is statusKey: encoded once per server, not per client.
	status    []byte
	statusKey string
}

// stale makes statement name on this server be parsed afresh (after
// closing the old one) for a client that parses it from now on. Binds of
// statements parsed before still fail, as PostgreSQL's do for a statement
// prepared before its table changed.
func (st *serverState) stale(name string, seq uint64) {
	if st.closeBefore == nil {
		st.closeBefore = make(map[string]uint64)
	}
	if len(st.closeBefore) >= maxStale {
		// Bounded, for a client that fails Parse after Parse: forget what
		// the server has, and close every statement before parsing it
		// there, as after a DISCARD ALL.
		clear(st.closeBefore)
		st.stmts.Purge()
		st.unsure = true
		return
	}
	st.closeBefore[name] = seq
}

// maxStale bounds a server's closeBefore.
const maxStale = 1024

func newServerState() *serverState {
	lru, _ := simplelru.NewLRU[string, uint64](1<<30, nil)
	return &serverState{stmts: lru}
}

// dummyClose is the statement name of a Close sent only for its
// CloseComplete. Nothing stays prepared under it: a Parse under it (to
// have the server judge a text) is always followed by its Close.
const dummyClose = "qpr_none"

// plan decides, with s.mu held, what goes to the server for one client
// message and which answers to expect.
// planLocked is plan called with s.mu held, as handle calls it: a panic
// in it (a client's bytes meeting a bug) unlocks s.mu on its way to the
// session's recover, which ends the session and needs the lock; it used
// to deadlock there, and Shutdown with it.
func (s *session) planLocked(typ byte, body, raw []byte) ([]byte, error) {
	defer func() {
		if r := recover(); r != nil {
			s.mu.Unlock()
			panic(r)
		}
	}()
	return s.plan(typ, body, raw)
}

func (s *session) plan(typ byte, body, raw []byte) ([]byte, error) {
	out := s.out[:0]
	bad := errMalformed[typ]
	if bad == nil {
		bad = &clientError{"08P01", fmt.Sprintf("qprouter: malformed %q message", typ)}
	}
	if s.skipping && typ != 'S' {
		if typ == 'c' || typ == 'f' {
			// An extended-protocol COPY that failed: the client's end of
			// its data still ends its COPY here.
			s.clientCopying = false
		}
		return out, nil // the server ignores it until Sync; so do we
	}
	switch typ {
	case 'P', 'B', 'D', 'E', 'C':
		s.openRun = true
	case 'S', 'Q', 'F':
		s.openRun = false
	}
	now := time.Now()
	s.lastRequest = now
	if s.txBegan.IsZero() && s.p.opts.OnTransaction != nil {
		s.txBegan = now
	}
	switch typ {
	case 'Q':
		sql, _, ok := cstring(body)
		if !ok {
			return out, bad
		}
		if !s.rename {
			if len(s.texts) > 0 && scanWords(sql).drop {
				s.dropTexts(sql)
			}
			s.push(entry{kind: kQuery, sql: sql, start: now})
			return append(out, raw...), nil
		}
		// PostgreSQL skips a Query pipelined behind an extended-protocol
		// message that fails before the next Sync: then what the Query
		// would have dropped is given back (skipToSync).
		prev := 0
		if s.extendedRun() {
			prev = s.saveUnnamed()
		}
		s.push(entry{kind: kQuery, sql: sql, start: now, prev: prev})
		s.ucache = nil
		s.unnamedValid, s.unnamedLive = false, true // a Query drops the unnamed statement
		if name, ok := deallocateName(sql); ok {
			if st := s.stmts[name]; st != nil {
				// The server knows it by its server name: make sure it has
				// it, then deallocate that.
				e := s.queue[len(s.queue)-1]
				s.queue = s.queue[:len(s.queue)-1]
				out = s.probe(out, st)
				// Its Parse may yet fail, pipelined: then PostgreSQL
				// reports the client's name as missing.
				e.errFrom, e.errTo = st.server, name
				delete(s.stmts, name)
				s.sst.stmts.Remove(st.server)
				// PostgreSQL may not run it (pipelined behind a message
				// that fails, or in a transaction that failed meanwhile):
				// then the client gets the statement back (skipToSync,
				// onServer), and as the server keeps it, the next Parse of
				// that name there closes it first.
				e.stmtName, e.before = name, st
				s.sst.stale(st.server, s.p.stmtSeq.Add(1))
				s.push(e)
				return appendMsg(out, 'Q', []byte("DEALLOCATE "+quoteIdent(st.server)), nul), nil
			}
		}
		s.queue[len(s.queue)-1].ops = s.noteSQL(sql)
		return append(out, raw...), nil
	case 'F':
		if len(body) < 4 {
			return out, bad
		}
		if s.rename && pinsByFastpath(binary.BigEndian.Uint32(body)) {
			s.pinned = true
		}
		s.push(entry{kind: kQuery, sql: "<function call>", start: now})
		return append(out, raw...), nil
	case 'S':
		if s.clientCopying {
			// PostgreSQL ignores a Sync during COPY FROM STDIN (libpq
			// sends one behind an extended-protocol COPY before it knows
			// it is one): no answer comes for it.
			return append(out, raw...), nil
		}
		s.skipping = false
		s.push(entry{kind: kSync})
		return append(out, raw...), nil
	case 'H':
		if n := len(s.queue); n == 0 || s.queue[n-1].kind == kSync || s.queue[n-1].kind == kQuery {
			return out, nil // a Sync or Query already makes the server answer
		}
		return append(out, raw...), nil
	case 'd', 'c', 'f':
		copying := s.clientCopying
		if typ != 'd' {
			s.clientCopying = false
			if !copying && len(s.queue) > 0 {
				// The client ended its data before the server's
				// CopyInResponse came (pgx does not wait for it).
				s.copyEndsAhead = append(s.copyEndsAhead, s.queue[len(s.queue)-1].seq)
			}
		}
		if len(s.queue) == 0 {
			if copying && typ != 'd' && s.rename {
				// The COPY failed while the client was still sending (a bad
				// row): the server has answered it, and its ReadyForQuery
				// could not release the server while the client copied.
				// The server ignores the CopyDone or CopyFail; a Sync
				// behind it, answered to no one, lets the server go back
				// to the pool as after any other statement.
				s.push(entry{kind: kSync, action: swallow})
				out = append(out, raw...)
				return append(out, 'S', 0, 0, 0, 4), nil
			}
			return out, nil // no COPY under way
		}
		return append(out, raw...), nil
	case 'P':
		name, rest, ok := cstring(body)
		if !ok {
			return out, bad
		}
		query, params, ok := cstring(rest)
		if !ok {
			return out, bad
		}
		prev := 0
		if name == "" {
			if s.rename {
				prev = s.saveUnnamed()
			}
			s.unnamed = query
			s.unnamedOps = nil
			if s.rename {
				s.unnamedOps = varOps(query, s.backslash())
				s.unnamedParams = append(s.unnamedParams[:0], params...)
				s.unnamedValid, s.unnamedLive = true, true
			}
		}
		if s.rename && pins(query, s.backslash()) {
			s.pinned = true
		}
		if name == "" && s.rename && s.p.opts.CacheUnnamed {
			// Taken from the cache only where nothing before it can fail
			// any more and the transaction is known not to be aborted
			// (where PostgreSQL refuses the Parse).
			if s.groupStart() && s.notAborted() {
				if st := s.cachedUnnamed(query, params); st != nil {
					return s.parseCachedUnnamed(out, st), nil
				}
			}
			s.ucache = nil // the server's unnamed statement is the client's
		}
		if !s.rename || name == "" {
			if !s.rename && name != "" {
				s.noteText(name, query)
			}
			s.push(entry{kind: kParse, unnamed: name == "", prev: prev, sql: query, start: now})
			return append(out, raw...), nil
		}
		if old := s.stmts[name]; old != nil {
			// PostgreSQL refuses a name in use (42P05): have the server
			// refuse its own name for the statement, reported under the
			// client's.
			out = s.ensure(out, old)
			fresh := newStmtFor(name, query, params, s.stmtKey())
			fresh.born = s.p.stmtSeq.Add(1)
			fresh.ops = varOps(query, s.backslash())
			s.push(entry{kind: kParse, action: renameError, errFrom: old.server, errTo: name, fresh: fresh, sql: query, start: now})
			return appendParse(out, old.server, query, params), nil
		}
		st := newStmtFor(name, query, params, s.stmtKey())
		st.born = s.p.stmtSeq.Add(1)
		st.ops = varOps(query, s.backslash())
		s.stmts[name] = st
		// st is newer than any copy of its text the server has, which
		// serverHas has closed first: the server analyses the text
		// afresh, as PostgreSQL does every Parse (errors come at the
		// Parse, and the statement sees today's tables).
		s.serverHas(st)
		return s.parseOn(out, st, entry{kind: kParse, stmt: st, stmtName: name, created: st, sql: query, start: now}), nil
	case 'B':
		portalName, rest, ok := cstring(body)
		if !ok {
			return out, bad
		}
		name, tail, ok := cstring(rest)
		if !ok {
			return out, bad
		}
		st := s.stmts[name]
		if name == "" && s.ucache != nil {
			st = s.ucache
			s.bindPortal(portalName, portal{sql: st.query, ops: st.ops})
			out = s.ensure(out, st)
			s.push(entry{kind: kBind, stmt: st, unnamed: true, errFrom: st.server, sql: st.query, start: now})
			return appendMsg(out, 'B', []byte(portalName), nul, []byte(st.server), nul, tail), nil
		}
		switch {
		case name == "":
			s.bindPortal(portalName, portal{sql: s.unnamed, ops: s.unnamedOps})
			out = s.ensureUnnamed(out)
		case st != nil:
			s.bindPortal(portalName, portal{sql: st.query, named: true, ops: st.ops})
		default:
			// Session mode keeps only the texts of named statements (for
			// the digests); a statement made with SQL PREPARE has none
			// here. Never a text an earlier Bind left.
			s.bindPortal(portalName, portal{sql: s.texts[name], named: true})
		}
		if s.rename && name != "" && st == nil && !s.pinned {
			// A name the client has not parsed: refused as PostgreSQL
			// would (26000), also when it is another client's server
			// name, which the server does have. A pinned client's may be
			// one it made with SQL PREPARE on its own server.
			s.push(entry{kind: kBind, errFrom: dummyClose, errTo: name, sql: s.portals[portalName].sql, start: now})
			return appendMsg(out, 'B', []byte(portalName), nul, []byte(dummyClose), nul, tail), nil
		}
		if !s.rename || name == "" || st == nil {
			s.push(entry{kind: kBind, sql: s.portals[portalName].sql, start: now})
			return append(out, raw...), nil
		}
		out = s.ensure(out, st)
		// A Bind that does not fit the statement (parameter or format
		// counts) is refused with an error naming it: the client's name.
		s.push(entry{kind: kBind, stmt: st, errFrom: st.server, errTo: name, sql: st.query, start: now})
		return appendMsg(out, 'B', []byte(portalName), nul, []byte(st.server), nul, tail), nil
	case 'D':
		if len(body) < 2 {
			return out, bad
		}
		name, _, ok := cstring(body[1:])
		if !ok {
			return out, bad
		}
		st := s.stmts[name]
		if body[0] == 'S' && name == "" && s.ucache != nil {
			st = s.ucache
			out = s.ensure(out, st)
			s.push(entry{kind: kDescribe, unnamed: true, errFrom: st.server})
			return appendMsg(out, 'D', []byte{'S'}, []byte(st.server), nul), nil
		}
		if body[0] == 'S' && name == "" {
			out = s.ensureUnnamed(out)
		}
		if s.rename && body[0] == 'S' && name != "" && st == nil && !s.pinned {
			// as for a Bind of a name the client has not parsed
			s.push(entry{kind: kDescribe, errFrom: dummyClose, errTo: name})
			return appendMsg(out, 'D', []byte{'S'}, []byte(dummyClose), nul), nil
		}
		if !s.rename || body[0] != 'S' || name == "" || st == nil {
			s.push(entry{kind: kDescribe})
			return append(out, raw...), nil
		}
		out = s.ensure(out, st)
		s.push(entry{kind: kDescribe})
		return appendMsg(out, 'D', []byte{'S'}, []byte(st.server), nul), nil
	case 'E':
		name, rest, ok := cstring(body)
		if !ok || len(rest) < 4 {
			return out, bad
		}
		pt := s.portals[name]
		e := entry{kind: kExecute, sql: pt.sql, named: pt.named, start: now, ops: pt.ops,
			portal: name, bind: pt.seq, maxRows: int64(int32(binary.BigEndian.Uint32(rest)))}
		if !s.rename && len(s.texts) > 0 && scanWords(pt.sql).drop {
			s.dropTexts(pt.sql) // JDBC and psycopg deallocate so too
		}
		if s.rename && scanWords(pt.sql).drop {
			if _, all := droppedStatements(pt.sql); all {
				e.dropsAll = maps.Clone(s.stmts)
			}
		}
		s.push(e)
		return append(out, raw...), nil
	case 'C':
		if len(body) < 2 {
			return out, bad
		}
		name, _, ok := cstring(body[1:])
		if !ok {
			return out, bad
		}
		e := entry{kind: kClose}
		if body[0] == 'S' && name != "" && s.rename {
			e.stmtName, e.before = name, s.stmts[name]
		}
		if body[0] == 'S' && name == "" && s.rename {
			e.prev = s.saveUnnamed() // given back if the server skips the Close
		}
		s.push(e)
		if body[0] == 'S' && name == "" {
			s.dropCachedUnnamed()
			if s.rename {
				// The client has no unnamed statement any more, and once
				// this Close has run neither has the server.
				s.unnamedValid, s.unnamedLive = false, true
			}
		}
		if !s.rename || body[0] != 'S' || name == "" {
			if body[0] == 'P' {
				delete(s.portals, name)
			} else if name != "" {
				delete(s.texts, name)
			}
			return append(out, raw...), nil
		}
		// The client's statement is forgotten; the server keeps its copy
		// until evicted. A Close of a name nothing has earns CloseComplete.
		delete(s.stmts, name)
		return appendClose(out, 'S', dummyClose), nil
	}
	return out, bad
}

// errMalformed are the errors for malformed client messages, made once
// rather than for every message planned.
var errMalformed = func() map[byte]*clientError {
	m := map[byte]*clientError{}
	for _, typ := range []byte("QPBDECSHFdcf") {
		m[typ] = &clientError{"08P01", fmt.Sprintf("qprouter: malformed %q message", typ)}
	}
	return m
}()

// ensureUnnamed gives the current server the client's unnamed statement
// before a Bind or Describe of it (transaction mode): re-Parsed when the
// client has one, closed when it has none, so that another client's is
// never used. The answer is swallowed.
func (s *session) ensureUnnamed(out []byte) []byte {
	if !s.rename || s.unnamedLive {
		return out
	}
	s.unnamedLive = true
	if !s.unnamedValid {
		s.push(entry{kind: kClose, action: swallow, unnamed: true})
		return appendClose(out, 'S', "")
	}
	s.push(entry{kind: kParse, action: swallow, unnamed: true})
	return appendParse(out, "", s.unnamed, s.unnamedParams)
}

// ensure injects a Parse when the server lacks st; its ParseComplete is
// swallowed.
func (s *session) ensure(out []byte, st *stmt) []byte {
	if s.serverHas(st) {
		s.cacheOp("hit")
		return out
	}
	return s.parseOn(out, st, entry{kind: kParse, action: swallow, stmt: st})
}

// probe makes sure the server has st ahead of a simple Query that names
// it, with a Parse and a Sync of its own whose answers the client never
// sees. A Parse injected without the Sync would, should it fail (in an
// aborted transaction, or a text that no longer parses), make the server
// skip the Query and wait for a Sync the client never sends.
//
// Behind extended-protocol messages not yet synced the Parse goes without
// the Sync: a Sync there would end the skipping that a failure among them
// starts, and run what PostgreSQL would skip. (Should that Parse fail
// while the messages before it did not, the server waits for the
// client's next Sync before it answers the Query.)
func (s *session) probe(out []byte, st *stmt) []byte {
	if s.extendedRun() {
		return s.ensure(out, st)
	}
	if s.serverHas(st) {
		s.cacheOp("hit")
		return out
	}
	out = s.parseOn(out, st, entry{kind: kParse, action: swallow, stmt: st, probe: true})
	s.push(entry{kind: kSync, probe: true})
	return append(out, 'S', 0, 0, 0, 4)
}

// statusKnown tells whether the transaction status a message planned now
// runs under is known: no ReadyForQuery is still to come before it.
func (s *session) statusKnown() bool {
	for i := range s.queue {
		if k := s.queue[i].kind; k == kSync || k == kQuery {
			return false
		}
	}
	return true
}

// notAborted tells whether a message planned now is known to run outside
// an aborted transaction. A Parse answered without the server parsing (a
// statement it has) is right only then, since PostgreSQL refuses every
// Parse in an aborted transaction (25P02).
func (s *session) notAborted() bool {
	return s.txStatus != 'E' && s.statusKnown()
}

// parseOn parses st on the current server under its server name (a cache
// miss), after closing what must make room for it; e is the answer to
// expect.
func (s *session) parseOn(out []byte, st *stmt, e entry) []byte {
	s.cacheOp("miss")
	out = s.makeRoom(out)
	out = s.closeFirst(out, st.server)
	s.sst.stmts.Add(st.server, s.p.stmtSeq.Add(1))
	s.push(e)
	return appendParse(out, st.server, st.query, st.params)
}

// serverHas tells whether the server has st as the client knows it: not
// when it went stale before the client parsed st (it is parsed again).
func (s *session) serverHas(st *stmt) bool {
	if seq, stale := s.sst.closeBefore[st.server]; stale && st.born > seq {
		s.sst.stmts.Remove(st.server)
		return false
	}
	made, ok := s.sst.stmts.Get(st.server)
	if ok && st.born > made && st.client != "" {
		// The client parsed its named statement after the server's copy
		// was made (for another client, or before a change of its
		// tables): the copy is closed and the text parsed again, once per
		// client statement and server, so that it is analysed no earlier
		// than the client's own Parse. A cached unnamed statement
		// (Options.CacheUnnamed, client "") is shared as it is: that is
		// the cache's point, and a Bind failing 0A000 marks it stale.
		s.sst.stmts.Remove(st.server)
		s.sst.stale(st.server, made)
		return false
	}
	return ok
}

// closeFirst closes name on the server before it is parsed there, when
// the server may have it although the LRU does not know (after a
// conservative purge): Close of a missing statement is no error, a Parse
// of an existing one is 42P05.
func (s *session) closeFirst(out []byte, name string) []byte {
	if _, ok := s.sst.closeBefore[name]; ok {
		delete(s.sst.closeBefore, name)
	} else if !s.sst.unsure {
		return out
	}
	s.push(entry{kind: kClose, action: swallow})
	return appendClose(out, 'S', name)
}

func (s *session) cacheOp(op string) {
	if s.p.opts.OnCacheOp != nil {
		s.p.opts.OnCacheOp(op)
	}
}

// makeRoom closes the least recently used statements beyond the bound.
func (s *session) makeRoom(out []byte) []byte {
	for int64(s.sst.stmts.Len()) >= s.p.prepared.Load() {
		name, _, ok := s.sst.stmts.RemoveOldest()
		if !ok {
			break
		}
		s.cacheOp("evict")
		s.push(entry{kind: kClose, action: swallow, evict: name})
		out = appendClose(out, 'S', name)
	}
	return out
}

// bindPortal records the portal a Bind makes, numbered so that a run of
// an earlier portal of the name is told apart (portalRun).
func (s *session) bindPortal(name string, pt portal) {
	s.bindSeq++
	pt.seq = s.bindSeq
	s.portals[name] = pt
}

// dropTexts forgets the session-mode texts of the statements that SQL
// DEALLOCATE name, DEALLOCATE ALL and DISCARD ALL in sql drop (psycopg
// evicts its statements so), so that a name prepared again with SQL
// PREPARE is not booked under the old text and the map does not grow.
func (s *session) dropTexts(sql string) {
	for _, st := range splitStatementsEsc(sql, s.backslash()) {
		f := strings.Fields(trimLeadingComments(st))
		if len(f) > 1 && strings.EqualFold(f[0], "deallocate") && strings.EqualFold(f[1], "prepare") {
			f = append(f[:1], f[2:]...)
		}
		switch {
		case len(f) < 2:
		case strings.EqualFold(f[0], "discard") && strings.EqualFold(strings.TrimSuffix(f[1], ";"), "all"),
			strings.EqualFold(f[0], "deallocate") && strings.EqualFold(strings.TrimSuffix(f[1], ";"), "all"):
			clear(s.texts)
		case strings.EqualFold(f[0], "deallocate"):
			name := strings.TrimSuffix(f[1], ";")
			if len(name) >= 2 && name[0] == '"' && name[len(name)-1] == '"' {
				name = strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
			} else {
				name = strings.ToLower(name)
			}
			delete(s.texts, name)
		}
	}
}

// noteText records a named statement's text in session mode, where
// statements are not renamed and s.stmts stays empty, so that the
// digests of its Executes carry it.
func (s *session) noteText(name, query string) {
	if s.texts == nil {
		s.texts = make(map[string]string)
	}
	s.texts[name] = query
}

// noteSQL tracks pinning and statement-cache resets in a simple Query
// (transaction mode, its entry the queue's last) and returns the settings
// it changes. The client's statements a DEALLOCATE ALL or DISCARD ALL
// drops are kept in the entry, to be given back if it does not run.
func (s *session) noteSQL(sql string) (ops []varOp) {
	w := scanWords(sql)
	if w.pin && pinsText(sql, s.backslash()) {
		s.pinned = true
	}
	if w.vars {
		ops = splitVarOps(sql, s.backslash())
	}
	if w.drop {
		purge, all := droppedStatements(sql)
		if purge {
			// The server may have dropped all its statements, or none.
			s.sst.stmts.Purge()
			s.sst.unsure = true
		}
		if all {
			// never nil here: it also marks the Query as one that drops them
			before := make(map[string]*stmt, len(s.stmts))
			maps.Copy(before, s.stmts)
			s.queue[len(s.queue)-1].stmtsBefore = before
			s.noteChange()
			clear(s.stmts)
		}
	}
	return ops
}

// droppedStatements tells, statement by statement, whether sql may drop
// the server's prepared statements (purge) and whether it drops all of the
// client's (DISCARD ALL, DEALLOCATE [PREPARE] ALL). A statement that starts
// with a comment counts as both when it mentions either word.
func droppedStatements(sql string) (purge, all bool) {
	for _, st := range splitStatements(sql) {
		f := strings.Fields(strings.ToLower(st))
		if len(f) == 0 {
			continue
		}
		if strings.HasPrefix(f[0], "--") || strings.HasPrefix(f[0], "/*") {
			if containsFold(st, "discard") || containsFold(st, "deallocate") {
				purge, all = true, true
			}
			continue
		}
		if len(f) > 1 && f[1] == "prepare" && f[0] == "deallocate" {
			f = append(f[:1], f[2:]...)
		}
		switch {
		case len(f) < 2:
		case f[0] == "discard" && f[1] == "all", f[0] == "deallocate" && f[1] == "all":
			purge, all = true, true
		case f[0] == "deallocate" && strings.HasPrefix(strings.Trim(f[1], `"`), "qpr_"):
			purge = true
		}
	}
	return purge, all
}

// stmtKey is the key of a named statement parsed now (newStmtFor): the
// client's settings, as PostgreSQL analyses a statement under them
// (search_path picks its tables, TimeZone reads its literals), so that
// clients whose settings differ never share one. While a change of
// settings is on its way (pipelined ahead of the Parse, or not followed),
// the statement is the client's alone. Called with s.mu held.
func (s *session) stmtKey() string {
	inFlux := s.unsureVars || len(s.pending) > 0
	for i := 0; i < len(s.queue) && !inFlux; i++ {
		inFlux = len(s.queue[i].ops) > 0
	}
	if inFlux {
		return s.varsKey + "\x00" + strconv.FormatUint(s.p.stmtSeq.Add(1), 10)
	}
	return s.varsKey
}
