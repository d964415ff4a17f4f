// Caps on the server connections of several pools together.

package pool

import (
	"sync"
	"sync/atomic"
)

// Limit caps the server connections of a group of pools together:
// PgBouncer's max_db_connections (the pools of one database, whatever the
// user) and max_user_connections (the pools of one user). A pool counts a
// connection against its limits from the moment it decides to open it
// until the connection is closed, as it counts it against its own size.
//
// When a limit is full, a pool that needs a connection first closes an
// idle one of another pool of the group, and otherwise waits; a pool
// releasing a connection while a pool of its group waits on the limit
// closes it rather than keeping it idle, so that the waiter can connect.
type Limit struct {
	name string

	max     atomic.Int64 // 0: no cap
	open    atomic.Int64
	starved atomic.Int32 // waiters queued because this limit was full

	mu      sync.Mutex
	members []*Pool
}

// NewLimit returns a limit without a cap; SetMax sets one. name says
// what it caps, for errors: "max_db_connections of database app".
func NewLimit(name string) *Limit { return &Limit{name: name} }

// Name is the limit's name.
func (l *Limit) Name() string { return l.name }

// SetMax changes the cap (0: none). Raising it lets waiting pools connect
// at once; lowering it below the open count closes connections as they
// come back or idle out, never ones in use.
func (l *Limit) SetMax(n int) {
	if old := l.max.Swap(int64(max(0, n))); old == int64(max(0, n)) {
		return
	}
	l.mu.Lock()
	members := l.members
	l.mu.Unlock()
	refill(members, nil)
}

// Stat returns the connections counted and the cap (0: none).
func (l *Limit) Stat() (open, max int) { return int(l.open.Load()), int(l.max.Load()) }

// join adds p to the group.
func (l *Limit) join(p *Pool) {
	l.mu.Lock()
	l.members = append(l.members, p)
	l.mu.Unlock()
}

// leave takes p out of the group (Pool.Retire).
func (l *Limit) leave(p *Pool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, q := range l.members {
		if q == p {
			l.members = append(l.members[:i], l.members[i+1:]...)
			return
		}
	}
}

// Unused tells whether no pool is in the group and no connection is
// counted: a new limit of the same name would do as well.
func (l *Limit) Unused() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.members) == 0 && l.open.Load() == 0
}

// take counts one connection, false when the cap is reached.
func (l *Limit) take() bool {
	for {
		n, m := l.open.Load(), l.max.Load()
		if m > 0 && n >= m {
			return false
		}
		if l.open.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// give uncounts a connection take counted.
func (l *Limit) give() { l.open.Add(-1) }

// over reports whether more connections are counted than the cap allows
// (after SetMax lowered it).
func (l *Limit) over() bool {
	m := l.max.Load()
	return m > 0 && l.open.Load() > m
}

// others returns the group's pools but p.
func (l *Limit) others(p *Pool) []*Pool {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*Pool, 0, len(l.members))
	for _, q := range l.members {
		if q != p {
			out = append(out, q)
		}
	}
	return out
}

// refill lets the waiters of pools (but skip) connect in the room a closed
// connection or a raised cap made. The caller holds no pool's lock.
func refill(pools []*Pool, skip *Pool) {
	for _, q := range pools {
		if q == skip {
			continue
		}
		q.mu.Lock()
		q.refillLocked()
		q.mu.Unlock()
	}
}
