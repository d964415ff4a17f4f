// Package route is the seam where qprouter picks the backend (a pool of
// server connections) for a client or one of its transactions. The only
// router today maps (database, user) to its pool, on the server Targets
// gives the database; a read/write router can later look at the request's
// SQL and transaction state.
package route

import (
	"cmp"
	"context"
	"log/slog"
	"net"
	"sort"
	"sync"
	"time"

	"github.com/qpkit/qpkit/pkg/pool"
)

// Request is what a router may look at.
type Request struct {
	Database, User string
	ClientAddr     string
	// SQL is the first statement of the transaction when known: a
	// Query's text, a Parse's, or the text of the named statement a Bind
	// or Describe uses ("" at connect time, for the unnamed statement's
	// Bind, and for other messages).
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
	// Hold, when set, is given to every new pool (pool.Pool.SetHold) with
	// the pool's name: a proxy's PAUSE.
	Hold func(name string) bool
	// Targets, when set, refuses database names it has no server for and
	// gives the forced user of a database's target as its pools' user.
	Targets *Targets

	// UnusedTimeout is how long a pool no client uses and that holds no
	// server connection stays before Sweep removes it (0:
	// DefaultUnusedTimeout).
	UnusedTimeout time.Duration

	mu     sync.Mutex
	pools  map[[2]string]*pool.Pool
	limits map[string]*pool.Limit  // by name: one per database and one per user
	unused map[[2]string]time.Time // pools Sweep found unused, since when
}

// DefaultUnusedTimeout is Pools.UnusedTimeout's default.
const DefaultUnusedTimeout = time.Minute

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

// Generation changes whenever a reload replaces Targets (0 without
// Targets): a client routed under another generation may belong in
// another pool now (its database's forced user changed or went), which
// Route tells. One atomic load.
func (s *Pools) Generation() uint64 {
	if s.Targets == nil {
		return 0
	}
	return s.Targets.cur.Load().gen
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
	if hold := s.Hold; hold != nil {
		name := p.Name()
		p.SetHold(func() bool { return hold(name) })
	}
	p.SetLimits(s.limitLocked(dbLimit(database)), s.limitLocked(userLimit(user)))
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

// Sweep removes the pools nobody needs, to be called now and then: a
// database name costs a pool (and its janitor) from the first client that
// asks for it, even one the server refuses, so unused pools must not
// stay for the life of the process. Removed are the pools that no client
// has joined and none waits for and that either hold no server
// connection for UnusedTimeout, or that Route would no longer give
// (a reload removed their database or changed its forced user: their
// server connections close). It returns the names of the pools removed.
func (s *Pools) Sweep(now time.Time) (removed []string) {
	timeout := cmp.Or(s.UnusedTimeout, DefaultUnusedTimeout)
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, p := range s.pools {
		switch {
		case s.orphanLocked(p):
			if !p.Retire(true) {
				continue
			}
		case p.Unused():
			since, seen := s.unused[key]
			if !seen {
				if s.unused == nil {
					s.unused = make(map[[2]string]time.Time)
				}
				s.unused[key] = now
				continue
			}
			if now.Sub(since) < timeout || !p.Retire(false) {
				continue
			}
		default:
			delete(s.unused, key)
			continue
		}
		delete(s.pools, key)
		delete(s.unused, key)
		removed = append(removed, p.Name())
	}
	s.dropLimitsLocked()
	return removed
}

// orphanLocked tells whether Route would no longer give p: its database
// has no server now, or a forced user that is not p's.
func (s *Pools) orphanLocked(p *pool.Pool) bool {
	if s.Targets == nil {
		return false
	}
	if _, err := s.Targets.For(p.Database); err != nil {
		return true
	}
	return s.Targets.poolUser(p.Database, p.User) != p.User
}

// dropLimitsLocked forgets the limits no pool is in and that count no
// connection (a pool retired by force may still have some, which must
// count against its database's cap until they close); a pool made for
// them later gets a new one.
func (s *Pools) dropLimitsLocked() {
	for name, l := range s.limits {
		if l.Unused() {
			delete(s.limits, name)
		}
	}
}

func dbLimit(database string) string { return "max_db_connections of database " + database }
func userLimit(user string) string   { return "max_user_connections of user " + user }

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
