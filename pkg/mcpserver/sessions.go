// HTTP session IDs that end: a DELETE terminates one, and an idle or
// unknown one gets 404, after which the MCP client starts a new session.

package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"time"
	"weak"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/mark3labs/mcp-go/server"
)

const (
	// maxSessions bounds the live sessions kept; beyond it the one idle
	// longest is forgotten (its client gets 404 and starts afresh).
	maxSessions = 10_000
	// sessionIdle is how long a session lives without a request.
	sessionIdle   = 24 * time.Hour
	sessionPrefix = "mcp-session-"
)

// sessionIDs is mcp-go's SessionIdManager for mcpg: the IDs it generated
// and that were neither terminated nor idle too long. The stateless
// manager mcpg used before took any well-formed ID, so a deleted session
// went on working.
//
// A session mcpg forgets (idle, or evicted beyond maxSessions) is also
// released from the server and its transports, as a DELETE releases it:
// most clients just go away, and what mcp-go keeps of their sessions must
// not grow without bound.
type sessionIDs struct {
	mu   sync.Mutex
	live *simplelru.LRU[string, time.Time] // ID: last request
	now  func() time.Time
	// gone are the IDs the LRU dropped under mu, to release once mu is
	// unlocked (release).
	gone []string
	// server is the MCPServer the IDs are of (weakly: the manager lives as
	// long as it), transports its streamable HTTP servers taking them
	// (weakly: a handler may go before its server); both keep state of
	// every session.
	server     weak.Pointer[server.MCPServer]
	transports []weak.Pointer[server.StreamableHTTPServer]
}

func newSessionIDs(s *server.MCPServer) *sessionIDs {
	ids := &sessionIDs{now: time.Now, server: weak.Make(s)}
	ids.live, _ = simplelru.NewLRU(maxSessions, func(id string, _ time.Time) { ids.gone = append(ids.gone, id) })
	return ids
}

// sessionManagers maps each MCPServer to its sessions' IDs, weakly (as
// fastPaths): every HTTP handler of one server (mcp-go keeps the sessions
// in the server) takes the same IDs.
var sessionManagers sync.Map // weak.Pointer[server.MCPServer] -> *sessionIDs

func sessionIDsOf(s *server.MCPServer) *sessionIDs {
	k := weak.Make(s)
	if v, ok := sessionManagers.Load(k); ok {
		return v.(*sessionIDs)
	}
	v, loaded := sessionManagers.LoadOrStore(k, newSessionIDs(s))
	if !loaded {
		runtime.AddCleanup(s, func(k weak.Pointer[server.MCPServer]) { sessionManagers.Delete(k) }, k)
	}
	return v.(*sessionIDs)
}

// addTransport notes t as one taking these IDs, so that a forgotten
// session's state in it is released too.
func (s *sessionIDs) addTransport(t *server.StreamableHTTPServer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.transports = slices.DeleteFunc(s.transports, func(p weak.Pointer[server.StreamableHTTPServer]) bool { return p.Value() == nil })
	s.transports = append(s.transports, weak.Make(t))
}

// Generate returns a new random ID and keeps it.
func (s *sessionIDs) Generate() string {
	var b [16]byte
	rand.Read(b[:])
	id := sessionPrefix + hex.EncodeToString(b[:])
	s.mu.Lock()
	now := s.now()
	s.live.Add(id, now) // beyond maxSessions, evicts the least recently used
	s.expire(now)
	gone := s.takeGone()
	s.mu.Unlock()
	s.release(gone)
	return id
}

var errUnknownSession = errors.New("unknown or expired session")

// Validate accepts a live ID (and notes its use); any other is refused,
// which mcp-go answers with 404 Not Found.
func (s *sessionIDs) Validate(id string) (terminated bool, err error) {
	s.mu.Lock()
	last, ok := s.live.Peek(id)
	now := s.now()
	switch {
	case !ok:
		err = errUnknownSession
	case now.Sub(last) > sessionIdle:
		s.live.Remove(id)
		terminated = true
	default:
		s.live.Add(id, now)
	}
	s.expire(now)
	gone := s.takeGone()
	s.mu.Unlock()
	s.release(gone)
	return terminated, err
}

// Terminate forgets id (a client's DELETE, after which mcp-go releases
// the session itself).
func (s *sessionIDs) Terminate(id string) (notAllowed bool, err error) {
	s.mu.Lock()
	s.live.Remove(id)
	gone := s.takeGone()
	s.mu.Unlock()
	s.release(slices.DeleteFunc(gone, func(g string) bool { return g == id }))
	return false, nil
}

// maxExpire bounds the idle sessions one request expires, so that no
// request pays for a long quiet period's; each request adds at most one
// session, so the idle ones still go.
const maxExpire = 16

// expire forgets up to maxExpire sessions idle longer than sessionIdle,
// the least recently used first; s.mu is held.
func (s *sessionIDs) expire(now time.Time) {
	for range maxExpire {
		_, last, ok := s.live.GetOldest()
		if !ok || now.Sub(last) <= sessionIdle {
			return
		}
		s.live.RemoveOldest()
	}
}

// takeGone returns and clears the IDs the LRU dropped; s.mu is held.
func (s *sessionIDs) takeGone() []string {
	gone := s.gone
	s.gone = nil
	return gone
}

// release unregisters the forgotten sessions gone from the server and
// drops their state in its transports, as a DELETE does (mcp-go has no
// other way in); s.mu is not held, as the DELETE calls Terminate.
func (s *sessionIDs) release(gone []string) {
	if len(gone) == 0 {
		return
	}
	s.mu.Lock()
	transports := make([]*server.StreamableHTTPServer, 0, len(s.transports))
	for _, p := range s.transports {
		if t := p.Value(); t != nil {
			transports = append(transports, t)
		}
	}
	s.mu.Unlock()
	srv := s.server.Value()
	ctx := context.Background()
	for _, id := range gone {
		for _, t := range transports {
			h := http.Header{}
			h.Set(server.HeaderKeySessionID, id)
			t.Handle(discardResponse{}, &server.HTTPRequest{Method: http.MethodDelete, Header: h, Context: ctx})
		}
		if srv != nil {
			srv.UnregisterSession(ctx, id) // also with no transport left
		}
	}
}

// discardResponse is where release's DELETEs answer.
type discardResponse struct{}

func (discardResponse) Header() http.Header         { return http.Header{} }
func (discardResponse) WriteHeader(int)             {}
func (discardResponse) Write(p []byte) (int, error) { return len(p), nil }
func (discardResponse) Flush()                      {}
func (discardResponse) CanStream() bool             { return false }
