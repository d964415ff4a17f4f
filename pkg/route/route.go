// Package route is the seam where qprouter picks the backend (a pool of
// server connections) for a client or one of its transactions. The only
// router today maps (database, user) to its pool, on the server Targets
// gives the database; a read/write router can later look at the request's
// SQL and transaction state.
package route

import (
	"context"
	"log/slog"
	"net"
	"sort"
	"sync"

	"github.com/qpkit/qpkit/pkg/pool"
)

// Request is what a router may look at.
type Request struct {
	Database, User string
	ClientAddr     string
	// SQL is the first statement of the transaction when known ("" at
	// connect time and for extended-protocol messages without text).
	SQL string
}

// Router chooses the pool a client's next transaction (or whole session)
// runs on. It must be safe for concurrent use.
type Router interface {
	Route(ctx context.Context, r Request) (*pool.Pool, error)
}

// Pools is the set of pools keyed by (database, user), created on first
// use with the config Config returns for them. It is the default Router.
type Pools struct {
	Connect pool.Connector
	// Config gives a new pool's settings; nil means pool defaults.
	Config func(database, user string) pool.Config
	Log    *slog.Logger
	// Adopt, when set, is given to every new pool (pool.Pool.SetAdopt).
	Adopt func(net.Conn) (net.Conn, error)
	// Targets, when set, refuses database names it has no server for and
	// gives the forced user of a database's target as its pools' user.
	Targets *Targets

	mu     sync.Mutex
	pools  map[[2]string]*pool.Pool
	limits map[string]*pool.Limit // by name: one per database and one per user
}

// Route returns the pool of (r.Database, r.User), creating it; with
// Targets, the user is the target's forced user when it has one.
func (s *Pools) Route(_ context.Context, r Request) (*pool.Pool, error) {
	user := r.User
	if s.Targets != nil {
		if _, err := s.Targets.For(r.Database); err != nil {
			return nil, err
		}
		user = s.Targets.poolUser(r.Database, user)
	}
	return s.Get(r.Database, user), nil
}

// Get returns the pool of (database, user), creating it.
func (s *Pools) Get(database, user string) *pool.Pool {
	key := [2]string{database, user}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.pools[key]; ok {
		return p
	}
	if s.pools == nil {
		s.pools = make(map[[2]string]*pool.Pool)
	}
	var cfg pool.Config
	if s.Config != nil {
		cfg = s.Config(database, user)
	}
	p := pool.New(database, user, cfg, s.Connect, s.Log)
	if s.Adopt != nil {
		p.SetAdopt(s.Adopt)
	}
	p.SetLimits(s.limitLocked("max_db_connections of database "+database), s.limitLocked("max_user_connections of user "+user))
	s.pools[key] = p
	return p
}

// limitLocked returns the limit of that name, creating it.
func (s *Pools) limitLocked(name string) *pool.Limit {
	if l, ok := s.limits[name]; ok {
		return l
	}
	if s.limits == nil {
		s.limits = make(map[string]*pool.Limit)
	}
	l := pool.NewLimit(name)
	s.limits[name] = l
	return l
}

// All returns the pools sorted by database and user.
func (s *Pools) All() []*pool.Pool {
	s.mu.Lock()
	out := make([]*pool.Pool, 0, len(s.pools))
	for _, p := range s.pools {
		out = append(out, p)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// Reconfigure applies Config again to every pool (after a reload).
func (s *Pools) Reconfigure() {
	if s.Config == nil {
		return
	}
	for _, p := range s.All() {
		p.SetConfig(s.Config(p.Database, p.User))
	}
}

// Close closes every pool.
func (s *Pools) Close() {
	for _, p := range s.All() {
		p.Close()
	}
}
