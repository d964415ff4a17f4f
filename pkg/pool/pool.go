// Package pool keeps server connections per (database, user): it connects
// and authenticates with pgconn, hijacks the socket, and hands the raw
// connection out and back with size, idle, lifetime and health rules.
package pool

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/rawconn"
)

// Config is one pool's settings. Zero fields take the defaults listed.
type Config struct {
	Size             int           // server connections at most (default 20)
	MinIdle          int           // idle connections kept open (default 0)
	MaxClients       int           // clients of this pool at once (default 0: no limit)
	AcquireTimeout   time.Duration // wait for a connection at most this long (default 5s)
	IdleTimeout      time.Duration // close idle connections above MinIdle after this (default 10m)
	MaxLifetime      time.Duration // close connections older than this at check-in (default 1h)
	HealthCheckAfter time.Duration // run an empty query on checkout after this much idleness (default 30s)
	ResetQuery       string        // run by Reset (default "DISCARD ALL")
	// ReservePool more connections may open, beyond Size, for a client
	// that has waited ReserveTimeout (PgBouncer's reserve_pool_size;
	// default 0, none); ReserveTimeout defaults to 5s.
	ReservePool    int
	ReserveTimeout time.Duration
	// RoundRobin hands out the idle connection that has waited longest
	// (PgBouncer's server_round_robin), so that the load spreads over
	// every connection and the hosts behind them; by default the most
	// recently used one, which keeps the fewest connections busy.
	RoundRobin bool
	// MaxDBConnections and MaxUserConnections are the caps of the pool's
	// Limits (SetLimits), the same for every pool of a limit (default 0:
	// no cap).
	MaxDBConnections, MaxUserConnections int
}

// Defaults fills zero fields with the defaults.
func (c Config) Defaults() Config {
	if c.Size <= 0 {
		c.Size = 20
	}
	if c.AcquireTimeout <= 0 {
		c.AcquireTimeout = 5 * time.Second
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 10 * time.Minute
	}
	if c.MaxLifetime <= 0 {
		c.MaxLifetime = time.Hour
	}
	if c.HealthCheckAfter <= 0 {
		c.HealthCheckAfter = 30 * time.Second
	}
	if c.ResetQuery == "" {
		c.ResetQuery = "DISCARD ALL"
	}
	if c.ReserveTimeout <= 0 {
		c.ReserveTimeout = 5 * time.Second
	}
	c.ReservePool = max(0, c.ReservePool)
	return c
}

// Connector opens an authenticated server connection for a pool.
type Connector func(ctx context.Context, database, user string) (*pgconn.PgConn, error)

// URLConnector connects with serverURL's host, port, TLS and password,
// and the pool's database and user. password, when not nil and returning
// a non-empty string, gives a user's server password instead.
func URLConnector(serverURL string, password func(user string) string) (Connector, error) {
	base, err := pgconn.ParseConfig(serverURL)
	if err != nil {
		return nil, fmt.Errorf("pool: server url: %w", err)
	}
	return connectorFor(base, password), nil
}

func connectorFor(base *pgconn.Config, password func(user string) string) Connector {
	return func(ctx context.Context, database, user string) (*pgconn.PgConn, error) {
		cfg := base.Copy()
		cfg.Database = database
		cfg.User = user
		if password != nil {
			if p := password(user); p != "" {
				cfg.Password = p
			}
		}
		return pgconn.ConnectConfig(ctx, cfg)
	}
}

// ErrTimeout is returned by Acquire when no connection came in time; the
// message names the pool and the wait.
var ErrTimeout = errors.New("no server connection available")

// ErrClosed is returned by Acquire on a closed pool.
var ErrClosed = errors.New("pool closed")

// ErrTooManyClients is returned by Join beyond MaxClients.
var ErrTooManyClients = errors.New("too many clients")

// Pool is the server connections of one (database, user).
type Pool struct {
	Database, User string
	name           string // NameOf(Database, User), for every query's metrics

	connect Connector
	log     *slog.Logger

	mu      sync.Mutex
	cfg     Config
	idle    []*Conn // most recently used last
	total   int     // open and opening
	active  int     // handed out
	clients int
	waiters []waiter
	closed  bool
	params  map[string]string
	stop    chan struct{}
	adopt   func(net.Conn) (net.Conn, error)
	hold    func() bool // SetHold
	// reserveTimer is armed for the next waiter to reach ReserveTimeout
	// (one per pool, not one per waiter: a long timeout would pile them up).
	reserveTimer *time.Timer

	// reconnectAt (Unix nanoseconds, 0 never) closes, as they come back,
	// the connections opened before it (Reconnect).
	reconnectAt atomic.Int64
	// disconnected: Disconnect (PAUSE) closed the idle connections; the
	// janitor opens none for MinIdle until a client acquires again.
	disconnected bool

	// The caps shared with other pools (SetLimits), set before first use.
	dbLimit, userLimit *Limit
	limits             []*Limit // the ones that are not nil
}

// SetLimits makes the pool count its connections against db (the pools of
// its database) and user (the pools of its user), either nil for none,
// with the caps of its Config. Call it once, before the pool is used.
func (p *Pool) SetLimits(db, user *Limit) {
	p.mu.Lock()
	p.dbLimit, p.userLimit = db, user
	for _, l := range []*Limit{db, user} {
		if l != nil {
			p.limits = append(p.limits, l)
			l.join(p)
		}
	}
	cfg := p.cfg
	p.mu.Unlock()
	p.applyCaps(cfg)
}

// applyCaps gives the limits cfg's caps. The caller holds no lock.
func (p *Pool) applyCaps(cfg Config) {
	if p.dbLimit != nil {
		p.dbLimit.SetMax(cfg.MaxDBConnections)
	}
	if p.userLimit != nil {
		p.userLimit.SetMax(cfg.MaxUserConnections)
	}
}

// reserveLocked counts a connection about to open, if the pool has fewer
// than size and its limits have room; full is the limit that had none.
func (p *Pool) reserveLocked(size int) (ok bool, full *Limit) {
	if p.total >= size {
		return false, nil
	}
	for i, l := range p.limits {
		if !l.take() {
			for _, m := range p.limits[:i] {
				m.give()
			}
			return false, l
		}
	}
	p.total++
	return true, nil
}

// unreserveLocked uncounts a connection closed (or never opened). Once
// unlocked, the caller lets the limits' other pools use the room
// (refillGroup).
func (p *Pool) unreserveLocked() {
	p.total--
	for _, l := range p.limits {
		l.give()
	}
}

// refillGroup lets the waiters of the other pools of p's limits connect in
// the room a closed connection of p made. The caller holds no lock.
func (p *Pool) refillGroup() {
	for _, l := range p.limits {
		refill(l.others(p), nil)
	}
}

// groupNeedsLocked reports whether a connection of p coming back should
// rather close: a limit of p is over its cap, or another pool waits on it.
func (p *Pool) groupNeedsLocked() bool {
	for _, l := range p.limits {
		if l.starved.Load() > 0 || l.over() {
			return true
		}
	}
	return false
}

// evictIdle closes an idle connection of another pool of l, the one idle
// longest in the first pool that has one; false when none has.
func (p *Pool) evictIdle(l *Limit) bool {
	for _, q := range l.others(p) {
		q.mu.Lock()
		if len(q.idle) == 0 {
			q.mu.Unlock()
			continue
		}
		c := q.idle[0]
		q.idle = q.idle[1:]
		q.unreserveLocked()
		q.mu.Unlock()
		c.Net.Close()
		p.log.Debug("pool: closed an idle connection for another pool", "pool", q.Name(), "for", p.Name(), "limit", l.Name())
		q.refillGroup()
		return true
	}
	return false
}

// SetAdopt hands the socket of every connection opened from now on to
// adopt (an event loop taking it out of the runtime's poller); Conn.Raw
// is then what adopt returned. Connections over TLS are not adopted.
func (p *Pool) SetAdopt(adopt func(net.Conn) (net.Conn, error)) {
	p.mu.Lock()
	p.adopt = adopt
	p.mu.Unlock()
}

// NameOf is the name of the pool of (database, user): "database/user",
// each part that holds a '/' or a '"' in double quotes (inner quotes
// doubled), so that two pools never share a name (PostgreSQL allows '/'
// in both). The name keys pauses, metrics and the admin API.
func NameOf(database, user string) string {
	return namePart(database) + "/" + namePart(user)
}

func namePart(s string) string {
	if !strings.ContainsAny(s, `/"`) {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// New returns a pool; its janitor runs until Close.
func New(database, user string, cfg Config, connect Connector, log *slog.Logger) *Pool {
	if log == nil {
		log = slog.Default()
	}
	p := &Pool{Database: database, User: user, name: NameOf(database, user), cfg: cfg.Defaults(), connect: connect, log: log, stop: make(chan struct{})}
	go p.janitor()
	return p
}

// Name is "database/user".
func (p *Pool) Name() string { return p.name }

// Config returns the pool's settings.
func (p *Pool) Config() Config {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg
}

// SetConfig changes the settings; a smaller size takes effect as
// connections come back.
func (p *Pool) SetConfig(cfg Config) {
	p.mu.Lock()
	p.cfg = cfg.Defaults()
	closed := false
	for len(p.idle) > 0 && p.total > p.cfg.Size {
		c := p.idle[0]
		p.idle = p.idle[1:]
		p.unreserveLocked()
		closed = true
		go c.Net.Close()
	}
	p.refillLocked()
	cfg = p.cfg
	p.mu.Unlock()
	p.applyCaps(cfg)
	if closed {
		p.refillGroup()
	}
}

// Join counts a client of this pool, refusing one beyond MaxClients, and
// any once the pool is closed (ErrClosed: Retire took it away; route
// again).
func (p *Pool) Join() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	if p.cfg.MaxClients > 0 && p.clients >= p.cfg.MaxClients {
		return fmt.Errorf("%w for pool %s (max %d)", ErrTooManyClients, p.Name(), p.cfg.MaxClients)
	}
	p.clients++
	return nil
}

// Leave uncounts a client Join counted.
func (p *Pool) Leave() {
	p.mu.Lock()
	p.clients--
	p.mu.Unlock()
}

// Stat is a pool's counters, and those of its limits (0 for a cap when
// there is none).
type Stat struct {
	Size, Active, Idle, Waiting, Clients int
	Reserve                              int // ReservePool
	DBConnections, MaxDBConnections      int
	UserConnections, MaxUserConnections  int
	MaxWait                              time.Duration // how long the longest waiting client has waited (0: none waits)
}

// Stat returns the counters.
func (p *Pool) Stat() Stat {
	p.mu.Lock()
	st := Stat{Size: p.cfg.Size, Active: p.active, Idle: len(p.idle), Waiting: len(p.waiters), Clients: p.clients, Reserve: p.cfg.ReservePool}
	for _, w := range p.waiters {
		if d := time.Since(w.since); d > st.MaxWait {
			st.MaxWait = d
		}
	}
	db, user := p.dbLimit, p.userLimit
	p.mu.Unlock()
	if db != nil {
		st.DBConnections, st.MaxDBConnections = db.Stat()
	}
	if user != nil {
		st.UserConnections, st.MaxUserConnections = user.Stat()
	}
	return st
}

// Reconnect closes the idle connections now and the others as they come
// back (PgBouncer's RECONNECT): from here on clients get connections
// opened afresh, e.g. to a server whose address changed.
func (p *Pool) Reconnect() { p.dropAll(false) }

// Disconnect closes the idle connections now and the others as they come
// back, as Reconnect, but opens none to refill the pool (PgBouncer's PAUSE
// disconnects from the servers for a restart of the database); the next
// client to need one opens it.
func (p *Pool) Disconnect() { p.dropAll(true) }

// Reopen ends what Disconnect began: the janitor opens connections up to
// MinIdle again from its next round (RESUME after PAUSE), as it does once
// a client acquires.
func (p *Pool) Reopen() {
	p.mu.Lock()
	p.disconnected = false
	p.mu.Unlock()
}

// dropAll closes the idle connections and marks the others to be closed
// as they come back; with disconnect, it lets no waiter connect and the
// janitor open none for MinIdle until a client acquires.
func (p *Pool) dropAll(disconnect bool) {
	p.mu.Lock()
	p.reconnectAt.Store(time.Now().UnixNano())
	idle := p.dropIdleLocked()
	if disconnect {
		p.disconnected = true
	} else {
		p.refillLocked()
	}
	p.mu.Unlock()
	p.closeDropped(idle)
}

// dropIdleLocked takes every idle connection out of the pool, freeing
// their slots; the caller closes them with closeDropped once unlocked.
func (p *Pool) dropIdleLocked() []*Conn {
	idle := p.idle
	p.idle = nil
	for range idle {
		p.unreserveLocked()
	}
	return idle
}

// closeDropped closes connections dropIdleLocked took, then lets the
// pools sharing a limit with this one use the room.
func (p *Pool) closeDropped(cs []*Conn) {
	for _, c := range cs {
		c.Net.Close()
	}
	if len(cs) > 0 {
		p.refillGroup()
	}
}

// closeNeeded reports whether c predates the pool's last Reconnect: its
// connect began before it (and may have reached the old server).
func (c *Conn) closeNeeded() bool {
	at := c.pool.reconnectAt.Load()
	return at != 0 && c.begun.UnixNano() <= at
}

// IdleConns describes the idle connections, longest idle first.
func (p *Pool) IdleConns() []ConnStat {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]ConnStat, 0, len(p.idle))
	for _, c := range p.idle {
		out = append(out, c.Stat())
	}
	return out
}

// Params returns the ParameterStatus values of the last connection made,
// nil before the first.
func (p *Pool) Params() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.params)
}

// TryAcquire returns an idle connection that needs no health check, or
// nil; it never waits and never connects. Among those, the most recently
// used one for which prefer (when not nil) is true comes first.
func (p *Pool) TryAcquire(prefer func(*Conn) bool) *Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.disconnected = false
	now := time.Now()
	usable := func(c *Conn) bool {
		return now.Sub(c.created) <= p.cfg.MaxLifetime && now.Sub(c.idleSince) < p.cfg.HealthCheckAfter
	}
	for {
		pick := -1
		for j := range p.idle {
			i := p.nextIdle(j)
			c := p.idle[i]
			if !usable(c) {
				continue
			}
			if pick < 0 {
				pick = i
			}
			if prefer == nil || prefer(c) {
				pick = i
				break
			}
		}
		if pick < 0 {
			return nil
		}
		c := p.takeIdleLocked(pick)
		p.active++
		if now.Sub(c.idleSince) < peekAfter || !c.serverGone() {
			return c
		}
		p.mu.Unlock()
		p.Discard(c)
		p.mu.Lock()
		if p.closed {
			return nil
		}
	}
}

// nextIdle is the index in p.idle of the j-th connection to hand out:
// from the most recently used (the end) back, or with RoundRobin from the
// one idle longest (the start) on. With p.mu held.
func (p *Pool) nextIdle(j int) int {
	if p.cfg.RoundRobin {
		return j
	}
	return len(p.idle) - 1 - j
}

// takeIdleLocked removes and returns p.idle[i].
func (p *Pool) takeIdleLocked(i int) *Conn {
	c := p.idle[i]
	if i == len(p.idle)-1 {
		p.idle[i] = nil
		p.idle = p.idle[:i]
		return c
	}
	p.idle = append(p.idle[:i], p.idle[i+1:]...)
	p.idle[len(p.idle):cap(p.idle)][0] = nil
	return c
}

// Acquire returns a healthy connection, waiting at most AcquireTimeout.
func (p *Pool) Acquire(ctx context.Context) (*Conn, error) {
	// The common case, an idle connection that needs no check (not even
	// healthy's peek), takes one lock and no timer.
	p.mu.Lock()
	p.disconnected = false
	timeout := p.cfg.AcquireTimeout
	if n := len(p.idle); n > 0 && !p.closed {
		c := p.idle[p.nextIdle(0)]
		now := time.Now()
		if idle := now.Sub(c.idleSince); now.Sub(c.created) <= p.cfg.MaxLifetime && idle < p.cfg.HealthCheckAfter && idle < peekAfter {
			p.takeIdleLocked(p.nextIdle(0))
			p.active++
			p.mu.Unlock()
			return c, nil
		}
	}
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		c, full, err := p.take(ctx)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				err = p.timeoutError(timeout)
				if full != nil {
					_, m := full.Stat()
					err = fmt.Errorf("%w (%s: %d reached)", err, full.Name(), m)
				}
			}
			return nil, err
		}
		if c != nil {
			if p.healthy(ctx, c) {
				return c, nil
			}
			p.Discard(c)
			continue
		}
		// A slot to fill: connect, unless the wait used up the time (the
		// slot came as it ran out): that is a timeout, not a failed connect.
		if err := ctx.Err(); err != nil {
			p.ReturnSlot()
			if errors.Is(err, context.DeadlineExceeded) {
				err = p.timeoutError(timeout)
			}
			return nil, err
		}
		return p.OpenSlot(ctx)
	}
}

// OpenSlot connects in a slot the pool handed out (nil from a WaitAsync
// channel), for a waiter that connects elsewhere than where it waited;
// the slot is given back if the connect fails.
func (p *Pool) OpenSlot(ctx context.Context) (*Conn, error) {
	c, err := p.open(ctx)
	if err != nil {
		p.ReturnSlot()
		return nil, err
	}
	return c, nil
}

// take returns an idle connection, or nil with a slot reserved (total and
// active counted) for the caller to connect in, or waits. When the wait
// fails, full is the limit it waited on, if any.
func (p *Pool) take(ctx context.Context) (c *Conn, full *Limit, err error) {
	evicted := false
	p.mu.Lock()
	for {
		if p.closed {
			p.mu.Unlock()
			return nil, nil, ErrClosed
		}
		if len(p.idle) > 0 {
			c := p.takeIdleLocked(p.nextIdle(0))
			p.active++
			p.mu.Unlock()
			return c, nil, nil
		}
		var ok bool
		if ok, full = p.reserveLocked(p.cfg.Size); ok {
			p.active++
			p.mu.Unlock()
			return nil, nil, nil
		}
		if full == nil || evicted {
			break
		}
		// A limit is full: make room by closing another pool's idle
		// connection, once, as PgBouncer does.
		p.mu.Unlock()
		evicted = p.evictIdle(full)
		p.mu.Lock()
		if !evicted {
			break
		}
	}
	ch := make(chan *Conn, 1)
	p.queueLocked(waiter{ch: ch, limit: full})
	p.mu.Unlock()
	select {
	case c := <-ch:
		return c, nil, nil
	case <-ctx.Done():
		if p.CancelWait(ch) {
			return nil, full, ctx.Err()
		}
		return <-ch, nil, nil // handed over meanwhile
	}
}

// queueLocked adds w to the waiters, counting it against the limit that
// held it back, and has a reserve connection considered for it once it
// has waited ReserveTimeout.
func (p *Pool) queueLocked(w waiter) {
	w.since = time.Now()
	if w.limit != nil {
		w.limit.starved.Add(1)
	}
	p.waiters = append(p.waiters, w)
	if p.cfg.ReservePool > 0 && p.reserveTimer == nil {
		p.reserveTimer = time.AfterFunc(p.cfg.ReserveTimeout, p.reserveCheck)
	}
}

// reserveCheck lets the waiters that have waited ReserveTimeout connect
// beyond Size, up to Size + ReservePool, then arms the timer for the
// next waiter still short of it.
func (p *Pool) reserveCheck() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reserveTimer = nil
	p.serveReserveLocked()
	p.armReserveLocked()
}

// armReserveLocked arms the reserve timer for the first waiter still
// short of ReserveTimeout, unless it is armed already.
func (p *Pool) armReserveLocked() {
	if p.closed || p.cfg.ReservePool <= 0 || p.reserveTimer != nil {
		return
	}
	for _, w := range p.waiters {
		if left := p.cfg.ReserveTimeout - time.Since(w.since); left > 0 {
			p.reserveTimer = time.AfterFunc(left, p.reserveCheck)
			return
		}
	}
}

// serveReserveLocked serves the waiters past ReserveTimeout from the
// reserve while it has room.
func (p *Pool) serveReserveLocked() {
	for len(p.waiters) > 0 && !p.closed && !p.heldLocked() && time.Since(p.waiters[0].since) >= p.cfg.ReserveTimeout {
		if ok, _ := p.reserveLocked(p.cfg.Size + p.cfg.ReservePool); !ok {
			return
		}
		p.active++
		p.log.Debug("pool: reserve connection", "pool", p.Name(), "total", p.total)
		p.wakeLocked(nil)
	}
}

// dropWaiterLocked removes waiter i without serving it.
func (p *Pool) dropWaiterLocked(i int) {
	if l := p.waiters[i].limit; l != nil {
		l.starved.Add(-1)
	}
	p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
}

// wakeLocked hands c (or a slot, nil) to the first waiter; active and
// total are already counted for it.
func (p *Pool) wakeLocked(c *Conn) {
	w := p.waiters[0]
	p.dropWaiterLocked(0)
	w.ch <- c
	if w.notify != nil {
		w.notify()
	}
}

// handLocked gives a released connection to the first waiter that
// prefers it (WaitAsync), or else to the first waiter. A preferring
// waiter passes only WaitAsync waiters that have waited less than
// maxPassed: an Acquire waiter, or one that waited longer, is served in
// its turn, so that no waiter starves while others keep queueing.
func (p *Pool) handLocked(c *Conn) {
	now := time.Now()
	for i, w := range p.waiters {
		if w.prefer == nil || now.Sub(w.since) >= maxPassed {
			break // not to be passed: it goes first
		}
		if w.prefer(c) {
			if i > 0 {
				copy(p.waiters[1:i+1], p.waiters[:i])
				p.waiters[0] = w
			}
			break
		}
	}
	p.wakeLocked(c)
}

// maxPassed is how long a WaitAsync waiter may be passed by later ones
// that prefer the connection released (handLocked).
const maxPassed = 50 * time.Millisecond

// waiter is one wait for a connection: it is sent one, or nil for a slot
// to connect in; notify, when set, is called after, and prefer picks the
// connections it is given first (WaitAsync). limit is the full limit that
// made it wait, if the pool itself had room.
type waiter struct {
	ch     chan *Conn
	notify func()
	prefer func(*Conn) bool
	since  time.Time
	limit  *Limit
}

// WaitAsync is a wait for an event loop, which must not block: when no
// connection is idle and none may be opened, it queues a waiter behind
// Acquire's and returns its channel, which gets the next connection
// released (or nil: a slot to connect in, see ReturnSlot) in turn, notify
// being called right after, with the pool's lock held. It returns nil
// when the caller should use Acquire instead (a connection is idle or
// may be opened now, or the pool is closed).
//
// A released connection for which a waiter's prefer is true goes to the
// first such waiter rather than the first in line: an event loop keeps
// connections on the loop that already polls them.
func (p *Pool) WaitAsync(notify func(), prefer func(*Conn) bool) chan *Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle) > 0 || p.total < p.cfg.Size {
		return nil
	}
	ch := make(chan *Conn, 1)
	p.queueLocked(waiter{ch: ch, notify: notify, prefer: prefer})
	return ch
}

// CancelWait withdraws a WaitAsync waiter. It returns false when the
// waiter was already handed a connection or slot, which is then in ch.
func (p *Pool) CancelWait(ch chan *Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, w := range p.waiters {
		if w.ch == ch {
			p.dropWaiterLocked(i)
			return true
		}
	}
	return false
}

// ReturnSlot gives back a slot to connect in (nil from a WaitAsync
// channel) that the waiter will not use.
func (p *Pool) ReturnSlot() {
	p.mu.Lock()
	p.unreserveLocked()
	p.active--
	p.refillLocked()
	p.mu.Unlock()
	p.refillGroup()
}

// TimeoutError is Acquire's error when AcquireTimeout passed.
func (p *Pool) TimeoutError() error {
	p.mu.Lock()
	timeout := p.cfg.AcquireTimeout
	p.mu.Unlock()
	return p.timeoutError(timeout)
}

func (p *Pool) timeoutError(timeout time.Duration) error {
	return fmt.Errorf("%w within %s for pool %s", ErrTimeout, timeout, p.Name())
}

func (p *Pool) healthy(ctx context.Context, c *Conn) bool {
	p.mu.Lock()
	after := p.cfg.HealthCheckAfter
	life := p.cfg.MaxLifetime
	p.mu.Unlock()
	if time.Since(c.created) > life {
		return false
	}
	idle := time.Since(c.idleSince)
	if idle >= peekAfter && c.serverGone() {
		p.log.Debug("pool: idle server connection gone", "pool", p.Name(), "pid", c.PID)
		return false
	}
	if idle < after {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := c.Exec(ctx, "")
	if err != nil || st != 'I' {
		p.log.Debug("pool: health check failed", "pool", p.Name(), "pid", c.PID, "err", err)
		return false
	}
	return true
}

func (p *Pool) open(ctx context.Context) (*Conn, error) {
	begun := time.Now()
	pc, err := p.connect(ctx, p.Database, p.User)
	if err != nil {
		return nil, err
	}
	if err := pc.SyncConn(ctx); err != nil {
		pc.Close(context.Background())
		return nil, err
	}
	h, err := pc.Hijack()
	if err != nil {
		pc.Close(context.Background())
		return nil, err
	}
	p.mu.Lock()
	adopt := p.adopt
	p.mu.Unlock()
	nc, raw := p.adoptConn(h.Conn, adopt)
	c := &Conn{
		Raw:     raw,
		Net:     nc,
		R:       bufio.NewReaderSize(nc, 32<<10),
		W:       bufio.NewWriterSize(nc, 16<<10),
		PID:     h.PID,
		Secret:  h.SecretKey,
		Params:  maps.Clone(h.ParameterStatuses),
		pool:    p,
		created: time.Now(),
		begun:   begun,
	}
	c.Defaults = c.Params // Params is replaced, never changed in place
	c.idleSince = c.created
	c.network, c.address = cancelAddress(h.Config.Host, h.Config.Port)
	if ra := h.Conn.RemoteAddr(); ra != nil && (ra.Network() == "tcp" || ra.Network() == "unix") && ra.String() != "" {
		// The host it reached: with several hosts, not always the first.
		c.network, c.address = ra.Network(), ra.String()
	}
	p.mu.Lock()
	p.params = maps.Clone(c.Params)
	p.mu.Unlock()
	p.log.Debug("pool: connected", "pool", p.Name(), "pid", c.PID)
	return c, nil
}

// SetHold makes the pool hand no connection or slot to its waiters while
// hold returns true (a proxy's PAUSE): a connection released meanwhile
// goes idle, and Kick hands out what waits once hold turns false. hold is
// called with the pool's lock held.
func (p *Pool) SetHold(hold func() bool) {
	p.mu.Lock()
	p.hold = hold
	p.mu.Unlock()
}

func (p *Pool) heldLocked() bool { return p.hold != nil && p.hold() }

// Kick hands idle connections, then room to connect in, to the waiters
// that queued while the pool was held (SetHold).
func (p *Pool) Kick() {
	var stale []*Conn
	now := time.Now()
	p.mu.Lock()
	for len(p.waiters) > 0 && len(p.idle) > 0 && !p.closed && !p.heldLocked() {
		c := p.takeIdleLocked(p.nextIdle(0))
		// Idle through the pause: a waiter on an event loop takes what it
		// is handed without a health check, so only a connection that
		// needs none goes (as TryAcquire's), the others close and make
		// room to connect in.
		if idle := now.Sub(c.idleSince); now.Sub(c.created) > p.cfg.MaxLifetime || idle >= p.cfg.HealthCheckAfter ||
			idle >= peekAfter && c.serverGone() {
			p.unreserveLocked()
			stale = append(stale, c)
			continue
		}
		p.active++
		p.handLocked(c)
	}
	p.refillLocked()
	p.mu.Unlock()
	for _, c := range stale {
		c.Net.Close()
	}
	p.refillGroup()
}

// Release returns a connection in the idle state (ReadyForQuery 'I', no
// responses outstanding). Old connections and those beyond the size are
// closed instead; so is one no client of the pool waits for while a limit
// is over its cap or another pool waits on it, and a reserve connection
// (beyond Size) no client waits for.
func (p *Pool) Release(c *Conn) {
	now := time.Now()
	p.mu.Lock()
	p.active--
	if p.closed || p.total > p.cfg.Size+p.cfg.ReservePool || now.Sub(c.created) > p.cfg.MaxLifetime || c.closeNeeded() {
		p.closeLocked(c)
		return
	}
	c.idleSince = now // in use until now: a waiter handed it needs no health check
	if len(p.waiters) > 0 && !p.heldLocked() {
		p.active++
		p.handLocked(c)
		p.mu.Unlock()
		return
	}
	if p.total > p.cfg.Size || p.groupNeedsLocked() {
		p.closeLocked(c)
		return
	}
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

// closeLocked closes a connection coming back, lets a waiter connect in
// its place, and unlocks.
func (p *Pool) closeLocked(c *Conn) {
	p.unreserveLocked()
	p.refillLocked()
	p.mu.Unlock()
	c.Net.Close()
	p.refillGroup()
}

// ResetQuery is the query session mode's check-in runs (Reset).
func (p *Pool) ResetQuery() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg.ResetQuery
}

// Reset runs the reset query (session mode's check-in) and releases the
// connection, or discards it when the reset fails.
func (p *Pool) Reset(ctx context.Context, c *Conn) {
	q := p.ResetQuery()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if st, err := c.Exec(ctx, q); err != nil || st != 'I' {
		p.log.Debug("pool: reset failed", "pool", p.Name(), "pid", c.PID, "err", err)
		p.Discard(c)
		return
	}
	p.Release(c)
}

// Discard closes a connection that is broken or in an unknown state.
func (p *Pool) Discard(c *Conn) {
	c.Net.Close()
	p.mu.Lock()
	p.active--
	p.unreserveLocked()
	p.refillLocked()
	p.mu.Unlock()
	p.refillGroup()
}

// refillLocked lets waiters connect in the room there is (freed slots, a
// larger size or cap), and those past ReserveTimeout in the reserve's:
// a reserve connection that closes, or a larger reserve, serves them now
// rather than at the next new waiter.
func (p *Pool) refillLocked() {
	for len(p.waiters) > 0 && !p.closed && !p.heldLocked() {
		if ok, _ := p.reserveLocked(p.cfg.Size); !ok {
			break
		}
		p.active++
		p.wakeLocked(nil)
	}
	if p.cfg.ReservePool > 0 && len(p.waiters) > 0 {
		p.serveReserveLocked()
		p.armReserveLocked()
	}
}

// Unused tells whether no client has joined the pool, none waits and it
// holds no server connection.
func (p *Pool) Unused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clients == 0 && len(p.waiters) == 0 && p.total == 0
}

// Retire closes the pool, as Close, if no client has joined it and none
// waits, and with force false only if it holds no server connection
// either; it reports whether it did. A client that joins after it fails
// with ErrClosed, so a pool is taken away only from no one.
func (p *Pool) Retire(force bool) bool {
	p.mu.Lock()
	if p.closed || p.clients > 0 || len(p.waiters) > 0 || (!force && p.total > 0) || p.heldLocked() {
		p.mu.Unlock()
		return false // in use, or paused (its RESUME must find it)
	}
	p.closed = true
	close(p.stop)
	if p.reserveTimer != nil {
		p.reserveTimer.Stop()
		p.reserveTimer = nil
	}
	idle := p.dropIdleLocked()
	p.mu.Unlock()
	for _, l := range p.limits {
		l.leave(p)
	}
	p.closeDropped(idle)
	return true
}

// Close closes the idle connections and refuses new acquires; handed-out
// connections are closed as they come back.
func (p *Pool) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.stop)
	if p.reserveTimer != nil {
		p.reserveTimer.Stop()
		p.reserveTimer = nil
	}
	idle := p.dropIdleLocked()
	p.mu.Unlock()
	p.closeDropped(idle)
}

// janitor closes idle connections past IdleTimeout (above MinIdle) or
// MaxLifetime and opens connections up to MinIdle.
func (p *Pool) janitor() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		var drop []*Conn
		p.mu.Lock()
		keep := p.idle[:0]
		// One more a tick while a limit is over its cap or another pool
		// waits on it.
		group := p.groupNeedsLocked()
		for i, c := range p.idle {
			expired := time.Since(c.created) > p.cfg.MaxLifetime ||
				(time.Since(c.idleSince) > p.cfg.IdleTimeout && len(keep)+len(p.idle)-i > p.cfg.MinIdle)
			if expired || group {
				group = group && expired
				drop = append(drop, c)
				p.unreserveLocked()
				continue
			}
			keep = append(keep, c)
		}
		p.idle = keep
		need := 0
		for !p.disconnected && need < p.cfg.MinIdle-len(p.idle) {
			if ok, _ := p.reserveLocked(p.cfg.Size); !ok {
				break
			}
			need++
		}
		p.mu.Unlock()
		for _, c := range drop {
			c.Net.Close()
		}
		if len(drop) > 0 {
			p.refillGroup()
		}
		for i := range need {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			c, err := p.open(ctx)
			cancel()
			p.mu.Lock()
			if err != nil {
				for range need - i {
					p.unreserveLocked()
				}
				p.refillLocked() // a client may wait behind the slots given back
				p.mu.Unlock()
				p.refillGroup()
				p.log.Warn("pool: min idle connect failed", "pool", p.Name(), "err", err)
				break
			}
			p.active++
			p.mu.Unlock()
			p.Release(c)
		}
	}
}

// adoptConn gives the socket under nc (a counting wrapper at most) to
// adopt, keeping the wrapper; without adopt, or over TLS, the socket gets
// raw system calls instead. raw is the adopted socket, or nil.
func (p *Pool) adoptConn(nc net.Conn, adopt func(net.Conn) (net.Conn, error)) (wrapped, raw net.Conn) {
	if adopt != nil {
		inner := nc
		cc, counted := nc.(*countConn)
		if counted {
			inner = cc.Conn
		}
		if _, ok := inner.(syscall.Conn); ok {
			a, err := adopt(inner)
			if err == nil {
				if counted {
					return &countConn{Conn: a, read: cc.read, wrote: cc.wrote}, a
				}
				return a, a
			}
			p.log.Debug("pool: socket not adopted", "pool", p.Name(), "err", err)
		}
	}
	return rawconn.Wrap(nc), nil
}
