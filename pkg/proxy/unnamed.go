package proxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// maxUnnamedSeen bounds the unnamed statement texts a session remembers
// (Options.CacheUnnamed); the set starts again when full.
const maxUnnamedSeen = 256

// cachedUnnamed returns the server statement that stands for the client's
// unnamed Parse of query, or nil when the Parse goes to the server as
// sent. A text is sent as is the first time the session parses it, and
// prepared under a name from the second time on, so that one-off
// statements do not fill the servers' statement caches. The name depends
// on the client's settings too: clients with another search_path never
// share a statement, which PostgreSQL would re-analyse (and refuse, were
// its result type to change).
func (s *session) cachedUnnamed(query string, params []byte) *stmt {
	if s.useen == nil || s.ucKey != s.varsKey || len(s.useen) >= maxUnnamedSeen {
		s.useen = make(map[string]*stmt)
		s.ucKey = s.varsKey
	}
	st, seen := s.useen[query]
	if !seen {
		s.useen[query] = nil
		return nil
	}
	if st == nil || !bytes.Equal(st.params, params) {
		st = newStmtFor("", query, params, s.varsKey)
		st.ops = varOps(query, s.backslash())
		s.useen[query] = st
	}
	return st
}

// dropCachedUnnamed forgets the client's cached unnamed statement: it has
// none any more (Close, a simple Query, a failed Parse), and a Bind of the
// unnamed statement must fail as PostgreSQL's would.
func (s *session) dropCachedUnnamed() {
	if s.ucache == nil {
		return
	}
	s.ucache = nil
	s.unnamedValid, s.unnamedLive = false, false
}

// newStmtFor makes a statement whose server name hashes its text, its
// parameter types and key (the client's settings: session.stmtKey for a
// named statement, session.varsKey for a cached unnamed one).
func newStmtFor(client, query string, params []byte, key string) *stmt {
	return &stmt{client: client, server: serverName(query, params, key), query: query, params: append([]byte(nil), params...)}
}

// serverName is the name a statement of query, params and key has on
// the servers.
func serverName(query string, params []byte, key string) string {
	h := sha256.New()
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(query)))
	h.Write(n[:])
	h.Write([]byte(query))
	h.Write(params) // self-delimiting: a count, then that many OIDs
	h.Write([]byte(key))
	sum := h.Sum(nil)
	return "qpr_" + hex.EncodeToString(sum[:10])
}

// parseCachedUnnamed plans the client's unnamed Parse of st: when the
// server has st already, a Close of nothing stands in for the Parse and
// its CloseComplete is sent as ParseComplete; otherwise st is parsed
// under its name.
func (s *session) parseCachedUnnamed(out []byte, st *stmt) []byte {
	s.ucache = st
	st.born = s.p.stmtSeq.Add(1) // parsed by the client now
	if s.serverHas(st) {
		s.cacheOp("hit")
		s.push(entry{kind: kClose, action: asParseComplete, stmt: st, unnamed: true})
		return appendClose(out, 'S', dummyClose)
	}
	return s.parseOn(out, st, entry{kind: kParse, stmt: st, unnamed: true})
}

// groupStart tells whether a message planned now starts what the server
// runs until the next Sync: nothing before it can fail any more, so an
// unnamed Parse is never skipped after it was taken from the cache
// (a later Bind of the unnamed statement, already planned, could not
// then follow PostgreSQL, which keeps the previous unnamed statement).
func (s *session) groupStart() bool {
	if s.skipping {
		return false
	}
	n := len(s.queue)
	return n == 0 || s.queue[n-1].ends
}

// unnamedState is the client's unnamed statement as the proxy knows it.
type unnamedState struct {
	query  string
	params []byte
	ops    []varOp
	valid  bool
	ucache *stmt
}

// saveUnnamed records the client's unnamed statement before an unnamed
// Parse is planned, for restoreUnnamed, and returns its entry.prev.
func (s *session) saveUnnamed() int {
	if len(s.queue) == 0 {
		s.uprev = s.uprev[:0] // no entry refers to them any more
	}
	n := len(s.uprev)
	if n < cap(s.uprev) {
		s.uprev = s.uprev[:n+1] // reuses the element's params buffer
	} else {
		s.uprev = append(s.uprev, unnamedState{})
	}
	u := &s.uprev[n]
	u.query, u.ops, u.valid, u.ucache = s.unnamed, s.unnamedOps, s.unnamedValid, s.ucache
	u.params = append(u.params[:0], s.unnamedParams...)
	return n + 1
}

// restoreUnnamed gives the client back the unnamed statement it had
// before a Parse the server skipped (after an error earlier in the
// pipeline). The current server may hold another, so the statement is
// parsed again before its next use.
func (s *session) restoreUnnamed(prev int) {
	u := &s.uprev[prev-1]
	s.unnamed, s.unnamedOps, s.unnamedValid, s.ucache = u.query, u.ops, u.valid, u.ucache
	s.unnamedParams = append(s.unnamedParams[:0], u.params...)
	s.unnamedLive = false
}
