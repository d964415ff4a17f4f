// HTTP session IDs that end: a DELETE terminates one, and an idle or
// unknown one gets 404, after which the MCP client starts a new session.

package mcpserver

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"runtime"
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
type sessionIDs struct {
	mu   sync.Mutex
	live *simplelru.LRU[string, time.Time] // ID: last request
	now  func() time.Time
}

func newSessionIDs() *sessionIDs {
	lru, _ := simplelru.NewLRU[string, time.Time](maxSessions, nil)
	return &sessionIDs{live: lru, now: time.Now}
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
	v, loaded := sessionManagers.LoadOrStore(k, newSessionIDs())
	if !loaded {
		runtime.AddCleanup(s, func(k weak.Pointer[server.MCPServer]) { sessionManagers.Delete(k) }, k)
	}
	return v.(*sessionIDs)
}

// Generate returns a new random ID and keeps it.
func (s *sessionIDs) Generate() string {
	var b [16]byte
	rand.Read(b[:])
	id := sessionPrefix + hex.EncodeToString(b[:])
	s.mu.Lock()
	s.live.Add(id, s.now())
	s.mu.Unlock()
	return id
}

var errUnknownSession = errors.New("unknown or expired session")

// Validate accepts a live ID (and notes its use); any other is refused,
// which mcp-go answers with 404 Not Found.
func (s *sessionIDs) Validate(id string) (terminated bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	last, ok := s.live.Peek(id)
	now := s.now()
	if !ok {
		return false, errUnknownSession
	}
	if now.Sub(last) > sessionIdle {
		s.live.Remove(id)
		return true, nil
	}
	s.live.Add(id, now)
	return false, nil
}

// Terminate forgets id (a client's DELETE).
func (s *sessionIDs) Terminate(id string) (notAllowed bool, err error) {
	s.mu.Lock()
	s.live.Remove(id)
	s.mu.Unlock()
	return false, nil
}
