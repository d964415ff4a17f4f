// Package proxy is qprouter's client side: it accepts PostgreSQL clients
// (startup and auth through pkg/pgwire), picks a pool through a
// route.Router, and relays messages on their boundaries between each
// client and a server connection in session or transaction mode.
package proxy

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/qpkit/qpkit/pkg/netloop"
	"github.com/qpkit/qpkit/pkg/pgwire"
	"github.com/qpkit/qpkit/pkg/pool"
	"github.com/qpkit/qpkit/pkg/rawconn"
	"github.com/qpkit/qpkit/pkg/route"
)

// Mode is when a server connection goes back to its pool.
type Mode int

const (
	// Session mode gives a client one server connection for its whole
	// session and runs the pool's reset query when the client leaves.
	Session Mode = iota
	// Transaction mode returns the server connection at every
	// ReadyForQuery 'I' unless the client is pinned.
	Transaction
	// Statement mode is transaction mode where a transaction may not span
	// statements: a ReadyForQuery other than 'I' closes the client with
	// PgBouncer's FATAL "transaction blocks not allowed in statement
	// pooling mode" and discards the server connection (rolling back).
	Statement
)

func (m Mode) String() string {
	switch m {
	case Transaction:
		return "transaction"
	case Statement:
		return "statement"
	}
	return "session"
}

// PerTransaction reports whether servers go back to the pool between a
// client's transactions (transaction and statement modes).
func (m Mode) PerTransaction() bool { return m == Transaction || m == Statement }

// ParseMode reads "session", "transaction" or "statement".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "session":
		return Session, nil
	case "transaction":
		return Transaction, nil
	case "statement":
		return Statement, nil
	}
	return 0, fmt.Errorf("pool mode %q: want session, transaction or statement", s)
}

// QueryEvent is one completed statement.
type QueryEvent struct {
	SQL      string        // the Query text, or the Parse text behind an Execute
	Duration time.Duration // from forwarding to the server until its completion
	Rows     int64         // from CommandComplete (0 when the tag has no count)
	SQLState string        // "" on success
	Pool     string        // "database/user"
	Prepared bool          // an Execute of a named statement
}

// Options configure a Proxy. Pools is required; every hook is optional
// and nil means not called.
type Options struct {
	// Mode is the pool mode of every client unless ModeFor says
	// otherwise.
	Mode Mode
	// ModeFor, when set, gives the pool mode of a client from its
	// startup's database and user (PgBouncer's per-database and per-user
	// pool_mode). It is asked once per client, at its start.
	ModeFor func(database, user string) Mode
	Pools   *route.Pools
	// Router picks the pool for a client (session mode) or a transaction
	// (transaction mode); nil means Pools.
	Router route.Router
	// Auth is the client-facing startup and authentication.
	Auth *pgwire.ServerConfig
	// MaxClients bounds clients connected at once (0: no limit).
	MaxClients int
	// ClientCaps, when set, returns the caps on the clients of a database
	// and of a user, all pools together (0: none), asked when a client
	// logs in; one over either is refused (53300).
	ClientCaps func(database, user string) (maxDB, maxUser int)
	// MaxMessage bounds a client message body (default
	// pgwire.LargeMessage, PostgreSQL's own bound; memory grows only as a
	// message's bytes arrive).
	MaxMessage int
	// PreparedPerServer bounds the renamed prepared statements one server
	// connection keeps in transaction mode (default 256); the least
	// recently used is closed beyond it.
	PreparedPerServer int
	// CacheUnnamed keeps, in transaction mode, a client's unnamed
	// statement prepared on the servers under a name once the client has
	// parsed its text twice: a later Parse of it is answered without the
	// server parsing again, as drivers' statement caches do. Plans then
	// follow PostgreSQL's rules for prepared statements (a generic plan
	// after five runs when it costs no more) instead of being made afresh
	// each time.
	CacheUnnamed bool
	// CancelTimeout bounds delivering a cancel request (default 5s).
	CancelTimeout time.Duration
	// ClientIdleTimeout, when set, returns how long a client may send
	// nothing while idle (no transaction open) before its connection is
	// closed (0: never), asked about once a second.
	ClientIdleTimeout func() time.Duration
	// IdleTransactionTimeout, when set, is the same for a client inside a
	// transaction: its connection is closed and the server's discarded,
	// which rolls the transaction back.
	IdleTransactionTimeout func() time.Duration
	// QueryTimeout, when set, returns how long a query may run on a
	// server with no message from its client before the client is closed
	// with an error, the server connection discarded and the query
	// cancelled (0: never), as PgBouncer's query_timeout.
	QueryTimeout func() time.Duration
	// TransactionTimeout, when set, returns how long a client's
	// transaction (explicit, or a statement on its own) may stay open
	// before the client is closed with an error, its server connection
	// discarded (which rolls the transaction back) and a query under way
	// cancelled (0: never), as PgBouncer's transaction_timeout.
	TransactionTimeout func() time.Duration
	Log                *slog.Logger
	// OnQuery is called once per completed statement, on the session's
	// goroutine (or the event loop's thread, see Loop), after the client has been sent the ReadyForQuery that
	// follows it and, in transaction mode, the server went back to the
	// pool: keep it fast. A client may see its answer a moment before
	// the statement is observed.
	OnQuery func(QueryEvent)
	// OnAcquire is called after each server acquire with the wait and,
	// for one that failed (its timeout, a refused connection), the error.
	OnAcquire func(pool string, wait time.Duration, err error)
	// OnCacheOp is called with "hit", "miss" or "evict" for the
	// per-server prepared-statement LRU (transaction mode), with the
	// session's lock held: keep it fast.
	OnCacheOp func(op string)
	// OnReplay is called for each round trip that replays a client's
	// settings on a server connection that had other ones.
	OnReplay func()
	// OnClientRead and OnClientWrite are called with the bytes of every
	// read from and write to a client connection, TLS included.
	OnClientRead, OnClientWrite func(n int)
	// PoolBytes, when set, is asked once per session, at its start, for
	// the functions that count the bytes read from and written to its
	// client from then on, by the pool's name ("database/user").
	PoolBytes func(pool string) (read, wrote func(n int))
	// OnClient is called with true when an authenticated client starts
	// its session and with false when it ends.
	OnClient func(connected bool)
	// OnTransaction is called with the pool's name when a client's
	// transaction ends (a ReadyForQuery saying idle: a statement outside a
	// transaction counts as one), as PgBouncer counts xact_count, with the
	// time since the client's first message of it was forwarded. It runs
	// with the session's lock held: keep it fast.
	OnTransaction func(pool string, d time.Duration)
	// ConsoleDatabase, when Console is set, is the database name of an
	// admin console (PgBouncer's "pgbouncer"): a client that logs in to it
	// is handed to Console on a goroutine of its own instead of a session.
	// Console returns when the client leaves or ctx ends (Shutdown).
	ConsoleDatabase string
	Console         func(ctx context.Context, cl *pgwire.Client)
	// OnUnknownCancel, when set, is handed a CancelRequest whose key is no
	// client session's (an admin console client's, say), instead of it
	// being dropped. It runs on a goroutine of the cancel request's own.
	OnUnknownCancel func(k pgwire.CancelKey)
	// Loops, when set, serve transaction mode's plain transactions on
	// event loops (netloop): every transaction-mode client socket not on
	// TLS is adopted after its startup by the next loop in turn (when Mode
	// is Transaction the loop accepts every client and gives session-mode
	// ones a goroutine after their startup), and Pools should adopt
	// the server sockets into these loops too (route.Pools.Adopt); a
	// server moves to the loop of the client that takes it.
	Loops []*netloop.Loop
	// Reload is what Reload runs (re-reading files, then applying
	// settings); nil makes Reload only reapply pool settings.
	Reload func() error
}

// Proxy serves clients. Create it with New.
type Proxy struct {
	opts   Options
	router route.Router
	log    *slog.Logger
	// acceptCtx ends every login under way when Shutdown begins
	// (stopAccept): an unfinished startup must not hold the drain.
	acceptCtx  context.Context
	stopAccept context.CancelFunc

	mu       sync.Mutex
	sessions map[*session]struct{}
	byKey    map[string]*session
	realPIDs map[uint32]*session // session-mode clients that have their server's PID (takeServerPID)
	counts   clientCounts        // clients per database and user (ClientCaps)
	idleOn   atomic.Bool         // an idle timeout is set: sessions count their messages
	ln       []net.Listener
	// draining is set under mu (so that Serve and the session start see it
	// in order with the listeners and sessions) but read without it by
	// isDraining, which the server goroutines call with their session's mu
	// held: Shutdown holds mu while it takes each session's mu.
	draining atomic.Bool
	// stmtSeq orders statements made by clients' Parses and the moments
	// server statements went stale (serverState.closeBefore, stmt.born).
	stmtSeq  atomic.Uint64
	nclients atomic.Int64
	// maxClients and prepared are Options.MaxClients and
	// PreparedPerServer, changed by SetLimits.
	maxClients, prepared atomic.Int64
	loopTxns             atomic.Int64               // answers relayed to ReadyForQuery on the event loop
	fenceWaits           atomic.Int64               // client messages held at a fence (fence.go)
	cancelledWaits       atomic.Int64               // waits for a server a cancel request ended (waitcancel.go)
	handBacks            [nBackReasons]atomic.Int64 // sessions handed back by the loop (handback.go)
	loopWelc             atomic.Int64               // sessions welcomed on the event loop
	loopEnds             atomic.Int64               // sessions ended on the event loop
	nextLoop             atomic.Uint64
	wg                   sync.WaitGroup
	// consoles ends the admin console clients at Shutdown.
	consoles    context.Context
	endConsoles context.CancelFunc

	// Pausing: a pool is paused when it was paused by name, or when every
	// pool is and it was not resumed by name since.
	pausing   atomic.Bool // something is paused: acquire looks under pauseMu
	pauseMu   sync.Mutex
	pauseAll  bool
	disabled  map[string]bool // databases that refuse new clients (Disable), under mu
	pausedBy  map[string]bool // pool names paused by name
	resumedBy map[string]bool // pool names resumed by name while every pool is paused
	resumed   chan struct{}   // closed and replaced at every resume: waiters look again
}

// ErrUnknownPool is what PausePool and ResumePool return for a name that
// is not one of Pools.
var ErrUnknownPool = errors.New("unknown pool")

// ErrDraining is Pause's and PausePool's answer once Shutdown has begun:
// the drain resumes every pool so that in-flight transactions can end,
// and a pause then would hold them until the drain's deadline.
var ErrDraining = errors.New("shutting down: pools are not paused while draining")

// New returns a proxy; Serve runs it on a listener.
func New(opts Options) (*Proxy, error) {
	if opts.Pools == nil {
		return nil, errors.New("proxy: Options.Pools is required")
	}
	if opts.Auth == nil {
		return nil, errors.New("proxy: Options.Auth is required")
	}
	// Every accepted client gets Welcome or an error next: AuthenticationOk
	// rides with Welcome's write.
	auth := *opts.Auth
	auth.DeferAuthOK = true
	opts.Auth = &auth
	if opts.PreparedPerServer <= 0 {
		opts.PreparedPerServer = 256
	}
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = pgwire.LargeMessage
	}
	if opts.CancelTimeout <= 0 {
		opts.CancelTimeout = 5 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	p := &Proxy{opts: opts, router: opts.Router, log: opts.Log,
		sessions: make(map[*session]struct{}), byKey: make(map[string]*session),
		realPIDs: make(map[uint32]*session), resumed: make(chan struct{})}
	p.acceptCtx, p.stopAccept = context.WithCancel(context.Background())
	if p.router == nil {
		p.router = opts.Pools
	}
	// Pools hand nothing to their queued clients while paused.
	opts.Pools.Hold = p.held
	for _, pl := range opts.Pools.All() {
		name := pl.Name()
		pl.SetHold(func() bool { return p.held(name) })
	}
	p.SetLimits(opts.MaxClients, opts.PreparedPerServer)
	p.consoles, p.endConsoles = context.WithCancel(context.Background())
	if opts.ClientIdleTimeout != nil || opts.IdleTransactionTimeout != nil || opts.QueryTimeout != nil || opts.TransactionTimeout != nil {
		go p.idleJanitor()
	}
	return p, nil
}

// LoopTransactions counts the answers (each up to its ReadyForQuery)
// relayed on the event loop (Options.Loop) rather than by a session's
// goroutine.
func (p *Proxy) LoopTransactions() int64 { return p.loopTxns.Load() }

// Draining reports whether Shutdown has begun: new clients are refused.
func (p *Proxy) Draining() bool { return p.draining.Load() }

// FenceWaits counts the times a pipelined client message was held until
// the answers to an earlier Sync group that changed statement names had
// come (fence.go).
func (p *Proxy) FenceWaits() int64 { return p.fenceWaits.Load() }

// CancelledWaits returns how many waits for a server a cancel request
// ended (the client got 57014 without its statement reaching a server).
func (p *Proxy) CancelledWaits() int64 { return p.cancelledWaits.Load() }

// LoopSessions counts the sessions welcomed on the event loop (accepted
// and authenticated there, Serve's listener detached to it) and, of
// those, the ones that ended there without a goroutine.
func (p *Proxy) LoopSessions() (welcomed, ended int64) {
	return p.loopWelc.Load(), p.loopEnds.Load()
}

// Mode is the proxy's default pool mode.
func (p *Proxy) Mode() Mode { return p.opts.Mode }

// ModeFor is the pool mode of a client of (database, user).
func (p *Proxy) ModeFor(database, user string) Mode {
	if p.opts.ModeFor != nil {
		return p.opts.ModeFor(database, user)
	}
	return p.opts.Mode
}

// Serve accepts clients on ln until ln is closed or Shutdown is called.
func (p *Proxy) Serve(ln net.Listener) error {
	if d, ok := ln.(detachable); ok && len(p.opts.Loops) > 0 && p.opts.Mode.PerTransaction() {
		return p.serveOnLoop(d, p.opts.Loops[0])
	}
	p.mu.Lock()
	if p.draining.Load() {
		p.mu.Unlock()
		return net.ErrClosed
	}
	p.ln = append(p.ln, ln)
	p.mu.Unlock()
	for {
		conn, err := ln.Accept()
		if err != nil {
			p.mu.Lock()
			d := p.draining.Load()
			p.mu.Unlock()
			if d || errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serveConn(conn)
		}()
	}
}

func (p *Proxy) serveConn(conn net.Conn) {
	defer conn.Close()
	p.serveSocket(rawconn.Wrap(conn), nil, nil, time.Time{})
}

// startupTimeout is the login timeout, from connecting.
func (p *Proxy) startupTimeout() time.Duration {
	if t := p.opts.Auth.StartupTimeout; t > 0 {
		return t
	}
	return pgwire.DefaultStartupTimeout
}

// serveSocket runs the startup and authentication on sock and then the
// client's session. lc is sock when an event loop accepted it (and read
// replay, the bytes Accept must read first); otherwise sock is adopted by
// a loop, if there are loops, after the startup.
//
// A login begun on a loop goes on here with what is left of its time
// (deadline); Shutdown ends logins under way (acceptCtx).
func (p *Proxy) serveSocket(sock net.Conn, lc *netloop.Conn, replay []byte, deadline time.Time) {
	conn := pgwire.WithPrefix(p.countClient(sock), replay)
	defer p.recoverClient(conn)
	ctx := p.acceptCtx
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	cl, st, err := pgwire.Accept(ctx, conn, p.opts.Auth)
	if err != nil {
		p.log.Debug("proxy: startup failed", "addr", conn.RemoteAddr().String(), "err", err)
		return
	}
	if cl == nil {
		if st != nil && st.Cancel != nil {
			p.cancel(*st.Cancel)
		}
		return
	}
	if p.isConsole(cl) {
		p.opts.Console(p.consoles, cl)
		return
	}
	switch n := len(p.opts.Loops); {
	case cl.Startup.TLS:
		lc = nil // stays with its goroutine (a loop's socket is then used as a net.Conn)
	case lc == nil && n > 0 && p.ModeFor(cl.Startup.Params["database"], cl.Startup.Params["user"]).PerTransaction():
		loop := p.opts.Loops[p.nextLoop.Add(1)%uint64(n)]
		if c, err := loop.Adopt(sock); err == nil {
			lc = c
			defer c.Close()
			cl.Conn = pgwire.Rebase(cl.Conn, p.countClient(c))
		} else {
			p.log.Debug("proxy: client socket not adopted", "err", err)
		}
	}
	s := p.openSession(cl, lc)
	if s == nil {
		return
	}
	defer p.closeSession(s)
	s.run(false, false, nil)
}

// isConsole tells whether cl logged in to the admin console.
func (p *Proxy) isConsole(cl *pgwire.Client) bool {
	return p.opts.Console != nil && cl.Startup.Params["database"] == p.opts.ConsoleDatabase
}

func (p *Proxy) recoverClient(conn net.Conn) {
	if r := recover(); r != nil {
		p.log.Warn("proxy: client handler panicked", "addr", conn.RemoteAddr().String(), "panic", r)
	}
}

// countClient wraps a client socket to report its bytes, when asked to.
func (p *Proxy) countClient(c net.Conn) net.Conn {
	if p.opts.OnClientRead != nil || p.opts.OnClientWrite != nil {
		return pool.CountConn(c, p.opts.OnClientRead, p.opts.OnClientWrite)
	}
	return c
}

// openSession registers an authenticated client's session (lc: its
// socket on an event loop, or nil); nil when it is refused (too many
// clients, shutting down), which the client was told.
func (p *Proxy) openSession(cl *pgwire.Client, lc *netloop.Conn) *session {
	if n, max := p.nclients.Add(1), p.maxClients.Load(); max > 0 && n > max {
		p.nclients.Add(-1)
		pgwire.WriteError(cl.Conn, "FATAL", "53300", fmt.Sprintf("qprouter: too many clients (max %d)", max))
		return nil
	}
	s := newSession(p, cl)
	s.lp.lc = lc
	s.lp.back = make(chan error, 1)
	if lc != nil {
		home := lc.Loop()
		s.lp.prefer = func(c *pool.Conn) bool {
			rs, _ := c.Raw.(*netloop.Conn)
			return rs != nil && rs.Loop() == home
		}
	}
	var maxDB, maxUser int
	if p.opts.ClientCaps != nil {
		maxDB, maxUser = p.opts.ClientCaps(s.db, s.user)
	}
	p.mu.Lock()
	if p.draining.Load() {
		p.mu.Unlock()
		pgwire.WriteError(cl.Conn, "FATAL", "57P01", "qprouter: shutting down")
		s.release()
		p.nclients.Add(-1)
		return nil
	}
	if p.disabled[s.db] {
		p.mu.Unlock()
		pgwire.WriteError(cl.Conn, "FATAL", "08P01", fmt.Sprintf("database %q is disabled", s.db))
		s.release()
		p.nclients.Add(-1)
		return nil
	}
	if why := p.counts.join(s.db, s.user, maxDB, maxUser); why != "" {
		p.mu.Unlock()
		pgwire.WriteError(cl.Conn, "FATAL", "53300", why)
		s.release()
		p.nclients.Add(-1)
		return nil
	}
	p.sessions[s] = struct{}{}
	p.byKey[keyString(cl.Key)] = s
	p.mu.Unlock()
	if p.opts.OnClient != nil {
		p.opts.OnClient(true)
	}
	return s
}

// closeSession forgets an ended session and closes its loop socket.
func (p *Proxy) closeSession(s *session) {
	p.mu.Lock()
	delete(p.sessions, s)
	delete(p.byKey, keyString(s.client.Key))
	if p.realPIDs[s.client.Key.PID] == s {
		delete(p.realPIDs, s.client.Key.PID)
	}
	p.counts.leave(s.db, s.user)
	p.mu.Unlock()
	if p.opts.OnClient != nil {
		p.opts.OnClient(false)
	}
	s.release()
	if s.lp.lc != nil {
		s.lp.lc.Close()
	}
	p.nclients.Add(-1)
}

func keyString(k pgwire.CancelKey) string {
	return string(append(binary.BigEndian.AppendUint32(nil, k.PID), k.Secret...))
}

// takeServerPID gives a session-mode client its server's process ID in
// its cancel key instead of a synthetic one, before the client is told
// the key: the PID its driver reports is then what pg_backend_pid(),
// pg_stat_activity and pg_terminate_backend() know, as on a direct
// connection (the client keeps that server until it disconnects). The
// secret stays qprouter's own, so a CancelRequest still comes here. A
// PID in the synthetic range (a server not on Linux) or one a client
// not yet ending has (servers on two hosts) leaves the synthetic key. A
// server goes to the next client before its last one is forgotten
// (closeSession), so an ending client's PID is taken over.
func (p *Proxy) takeServerPID(s *session, pid uint32) {
	if pid == 0 || pid >= pgwire.SyntheticPIDBase {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if old := p.realPIDs[pid]; old != nil {
		old.mu.Lock()
		ending := old.ending
		old.mu.Unlock()
		if !ending {
			return
		}
	}
	if _, ok := p.sessions[s]; !ok {
		return // closed meanwhile
	}
	delete(p.byKey, keyString(s.client.Key))
	s.mu.Lock()
	s.client.Key.PID = pid
	s.mu.Unlock()
	p.byKey[keyString(s.client.Key)] = s
	p.realPIDs[pid] = s
}

// cancel forwards a client's CancelRequest to the server running its query.
func (p *Proxy) cancel(k pgwire.CancelKey) {
	p.mu.Lock()
	s := p.byKey[keyString(k)]
	p.mu.Unlock()
	if s == nil {
		if p.opts.OnUnknownCancel != nil {
			p.opts.OnUnknownCancel(k)
			return
		}
		p.log.Debug("proxy: cancel request with an unknown key")
		return
	}
	s.cancel()
}

// waitResumed blocks while pl is paused. Nothing paused costs one atomic
// load.
func (p *Proxy) waitResumed(ctx context.Context, pl *pool.Pool) error {
	if !p.pausing.Load() {
		return nil
	}
	name := pl.Name()
	for {
		p.pauseMu.Lock()
		paused, ch := p.pausedLocked(name), p.resumed
		p.pauseMu.Unlock()
		if !paused {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// routeGen is the default router's Generation (0 with another router).
func (p *Proxy) routeGen() uint64 {
	if pools, ok := p.router.(*route.Pools); ok {
		return pools.Generation()
	}
	return 0
}

// joinPool routes a client to its pool and joins it. A pool that Sweep
// retired between the two is routed again: the next one is new (a pool
// closed for good, at shutdown, stays closed: the error then stands).
func (p *Proxy) joinPool(r route.Request) (*pool.Pool, error) {
	for try := 0; ; try++ {
		pl, err := p.router.Route(context.Background(), r)
		if err != nil {
			return nil, err
		}
		if err := pl.Join(); err != nil && (!errors.Is(err, pool.ErrClosed) || try == 2) {
			return nil, err
		} else if err == nil {
			return pl, nil
		}
	}
}

// held tells whether the pool of that name is paused; nothing paused
// costs one atomic load.
func (p *Proxy) held(name string) bool {
	if !p.pausing.Load() {
		return false
	}
	p.pauseMu.Lock()
	defer p.pauseMu.Unlock()
	return p.pausedLocked(name)
}

// kick has every pool hand out what its queued clients wait for, after a
// resume.
func (p *Proxy) kick() {
	for _, pl := range p.opts.Pools.All() {
		pl.Kick()
	}
}

func (p *Proxy) pausedLocked(name string) bool {
	return p.pausedBy[name] || (p.pauseAll && !p.resumedBy[name])
}

// changedLocked records whether anything is paused and wakes the waiters.
func (p *Proxy) changedLocked() {
	p.pausing.Store(p.pauseAll || len(p.pausedBy) > 0)
	close(p.resumed)
	p.resumed = make(chan struct{})
}

// Pause stops handing out server connections in every pool, including
// pools created while paused: transactions under way finish, new ones
// wait until Resume (or ResumePool for their pool).
func (p *Proxy) Pause() error {
	p.pauseMu.Lock()
	defer p.pauseMu.Unlock()
	if p.draining.Load() {
		return ErrDraining
	}
	p.pauseAll, p.resumedBy = true, nil
	p.changedLocked()
	return nil
}

// Resume lets every pool go on, those paused by name too.
func (p *Proxy) Resume() {
	p.pauseMu.Lock()
	p.pauseAll, p.pausedBy, p.resumedBy = false, nil, nil
	p.changedLocked()
	p.pauseMu.Unlock()
	for _, pl := range p.opts.Pools.All() {
		pl.Reopen() // a PAUSE's Disconnect kept MinIdle closed
	}
	p.kick()
}

// Paused reports whether every pool is paused (Pause without Resume).
func (p *Proxy) Paused() bool {
	p.pauseMu.Lock()
	defer p.pauseMu.Unlock()
	return p.pauseAll
}

// PausePool is Pause for one pool, named "database/user" as in
// pool.Pool.Name; the other pools keep working. A name that is not one of
// Pools is ErrUnknownPool.
func (p *Proxy) PausePool(name string) error {
	if !p.knownPool(name) {
		return fmt.Errorf("%w: %s", ErrUnknownPool, name)
	}
	p.pauseMu.Lock()
	defer p.pauseMu.Unlock()
	if p.draining.Load() {
		return ErrDraining
	}
	if p.pausedBy == nil {
		p.pausedBy = make(map[string]bool)
	}
	p.pausedBy[name] = true
	delete(p.resumedBy, name)
	p.changedLocked()
	return nil
}

// ResumePool lets one pool go on, also while every other pool stays paused
// by Pause.
func (p *Proxy) ResumePool(name string) error {
	if !p.knownPool(name) {
		return fmt.Errorf("%w: %s", ErrUnknownPool, name)
	}
	p.pauseMu.Lock()
	delete(p.pausedBy, name)
	if p.pauseAll {
		if p.resumedBy == nil {
			p.resumedBy = make(map[string]bool)
		}
		p.resumedBy[name] = true
	}
	p.changedLocked()
	p.pauseMu.Unlock()
	for _, pl := range p.opts.Pools.All() {
		if pl.Name() == name {
			pl.Reopen()
		}
	}
	p.kick()
	return nil
}

func (p *Proxy) knownPool(name string) bool {
	for _, pl := range p.opts.Pools.All() {
		if pl.Name() == name {
			return true
		}
	}
	return false
}

// Reload runs Options.Reload, then applies the pool settings again.
// Clients stay connected.
func (p *Proxy) Reload() error {
	if p.opts.Reload != nil {
		if err := p.opts.Reload(); err != nil {
			return err
		}
	}
	p.opts.Pools.Reconfigure()
	return nil
}

// SetLimits changes Options.MaxClients (for clients that log in from now
// on) and PreparedPerServer (a smaller one takes effect as statements are
// parsed); a PreparedPerServer of 0 or less keeps the one in force.
func (p *Proxy) SetLimits(maxClients, preparedPerServer int) {
	p.maxClients.Store(int64(maxClients))
	if preparedPerServer > 0 {
		p.prepared.Store(int64(preparedPerServer))
	}
}

// Reconfigure applies the pools' settings as Pools.Config gives them now,
// as Reload does after its Options.Reload (for settings changed without
// one).
func (p *Proxy) Reconfigure() { p.opts.Pools.Reconfigure() }

// PoolStat is one pool's state.
type PoolStat struct {
	Database, User string
	Mode           string
	Size           int           // the configured maximum
	Active         int           // server connections handed out
	Idle           int           // server connections in the pool
	Waiting        int           // clients waiting for a connection
	Clients        int           // clients of the pool
	Paused         bool          // by PausePool, or by Pause and not resumed by ResumePool
	MaxWait        time.Duration // how long its longest waiting client has waited
	// The pool's reserve, and the server connections of its database and
	// of its user with their caps (0: none).
	Reserve, DBConnections, MaxDBConnections, UserConnections, MaxUserConnections int
	// The clients of its database and of its user, all pools together,
	// with their caps (ClientCaps; 0: none).
	DBClients, MaxDBClients, UserClients, MaxUserClients int
}

// Pools returns every pool's state.
func (p *Proxy) Pools() []PoolStat {
	var out []PoolStat
	for _, pl := range p.opts.Pools.All() {
		st := pl.Stat()
		p.pauseMu.Lock()
		paused := p.pausedLocked(pl.Name())
		p.pauseMu.Unlock()
		ps := PoolStat{Database: pl.Database, User: pl.User, Mode: p.ModeFor(pl.Database, pl.User).String(),
			Size: st.Size, Active: st.Active, Idle: st.Idle, Waiting: st.Waiting, Clients: st.Clients, Paused: paused, MaxWait: st.MaxWait,
			Reserve: st.Reserve, DBConnections: st.DBConnections, MaxDBConnections: st.MaxDBConnections,
			UserConnections: st.UserConnections, MaxUserConnections: st.MaxUserConnections}
		if p.opts.ClientCaps != nil {
			ps.MaxDBClients, ps.MaxUserClients = p.opts.ClientCaps(pl.Database, pl.User)
		}
		p.mu.Lock()
		ps.DBClients, ps.UserClients = p.counts.byDB[pl.Database], p.counts.byUser[pl.User]
		p.mu.Unlock()
		out = append(out, ps)
	}
	return out
}

// ClientStat is one client's state.
type ClientStat struct {
	Addr, User, Database string
	Pool                 string // the name of the pool serving it (a forced user's); "" before it has one
	Application          string // application_name from the startup packet
	TLS                  bool
	State                string // "idle", "active" (a server is working for it) or "waiting" (for a server)
	ServerPID            uint32 // 0 without a server connection
	Pinned               bool
	ConnectedSince       time.Time
	LocalAddr            string    // the proxy's end ("" on a Unix socket)
	KeyPID               uint32    // the process ID of its synthetic cancel key: unique among clients
	WaitingSince         time.Time // when it began waiting for a server (zero when not waiting)
	LastRequest          time.Time // when it last sent a message the proxy planned (zero before its first)
}

// Clients returns every connected client's state.
func (p *Proxy) Clients() []ClientStat {
	p.mu.Lock()
	ss := make([]*session, 0, len(p.sessions))
	for s := range p.sessions {
		ss = append(ss, s)
	}
	p.mu.Unlock()
	out := make([]ClientStat, 0, len(ss))
	for _, s := range ss {
		out = append(out, s.stat())
	}
	return out
}

// Disable makes database refuse new clients (PgBouncer's DISABLE) with
// FATAL 08P01 `database "name" is disabled`; its clients stay.
func (p *Proxy) Disable(database string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.disabled == nil {
		p.disabled = make(map[string]bool)
	}
	p.disabled[database] = true
}

// Enable undoes Disable.
func (p *Proxy) Enable(database string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.disabled, database)
}

// Disabled reports whether database refuses new clients.
func (p *Proxy) Disabled(database string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.disabled[database]
}

// Kill pauses the pools of database, so that its new clients and
// queries wait for a resume, and closes its clients and their server
// connections at once (a transaction under way is rolled back), then its
// pools' other server connections (PgBouncer's KILL). It returns how many
// clients it closed, or ErrUnknownPool when database has no pool.
func (p *Proxy) Kill(database string) (int, error) {
	found := false
	for _, pl := range p.opts.Pools.All() {
		if pl.Database == database {
			found = true
			if err := p.PausePool(pl.Name()); err != nil {
				return 0, err
			}
		}
	}
	if !found {
		return 0, fmt.Errorf("%w: no pool of database %q", ErrUnknownPool, database)
	}
	p.mu.Lock()
	var ss []*session
	for s := range p.sessions {
		if s.db == database {
			ss = append(ss, s)
		}
	}
	p.mu.Unlock()
	for _, s := range ss {
		p.kill(s)
	}
	p.Reconnect(database)
	return len(ss), nil
}

// KillClient closes the client whose cancel key has process ID keyPID
// (ClientStat.KeyPID) and its server connection at once, as PgBouncer's
// KILL_CLIENT; false when no client has it.
func (p *Proxy) KillClient(keyPID uint32) bool {
	p.mu.Lock()
	found := p.realPIDs[keyPID] // the live one, where an ending one has it too
	if found == nil {
		for s := range p.sessions {
			if s.client.Key.PID == keyPID {
				found = s
				break
			}
		}
	}
	p.mu.Unlock()
	if found == nil {
		return false
	}
	p.kill(found)
	return true
}

// kill closes s's client and server sockets (a transaction under way is
// rolled back), cancelling a query under way so that its backend ends now
// rather than when the query does; the session's goroutines then end it.
func (p *Proxy) kill(s *session) {
	s.mu.Lock()
	srv := s.srv
	running := srv != nil && len(s.queue) > 0 && !s.waiting
	if srv != nil {
		// Closed under mu: the server is still this client's (a release
		// sets s.srv to nil under mu first; srvClosed stops one).
		srv.Net.Close()
		s.srvClosed = true
	}
	s.mu.Unlock()
	s.client.Conn.Close()
	if running {
		s.cancelOrphan(srv, "killed") // the backend may be running a query that does not write until it ends
	}
}

// Reconnect has the pools of database ("" every pool) close their server
// connections, idle ones now and the others when they come back
// (pool.Pool.Reconnect; PgBouncer's RECONNECT).
func (p *Proxy) Reconnect(database string) {
	p.ReconnectWhere(func(d string) bool { return database == "" || d == database })
}

// ReconnectWhere is Reconnect for the pools of the databases match picks
// (after a reload moved them to another server); it returns those
// databases that have pools, sorted.
func (p *Proxy) ReconnectWhere(match func(database string) bool) []string {
	var dbs []string
	for _, pl := range p.opts.Pools.All() { // sorted by database
		if match(pl.Database) {
			pl.Reconnect()
			if len(dbs) == 0 || dbs[len(dbs)-1] != pl.Database {
				dbs = append(dbs, pl.Database)
			}
		}
	}
	return dbs
}

// Disconnect closes the idle server connections of database's pools
// (every pool when ""), and the others as they come back, without opening
// new ones: what PAUSE does once the transactions under way have ended.
func (p *Proxy) Disconnect(database string) {
	for _, pl := range p.opts.Pools.All() {
		if database == "" || pl.Database == database {
			pl.Disconnect()
		}
	}
}

// ServerStat is one server connection.
type ServerStat struct {
	pool.ConnStat
	Database, User string
	State          string // "active" (a client's) or "idle" (in its pool)
	ClientKeyPID   uint32 // the client's ClientStat.KeyPID when active
}

// Servers returns every server connection: the clients' first, then the
// pools' idle ones. A connection being opened or checked is in neither.
func (p *Proxy) Servers() []ServerStat {
	p.mu.Lock()
	ss := make([]*session, 0, len(p.sessions))
	for s := range p.sessions {
		ss = append(ss, s)
	}
	p.mu.Unlock()
	var out []ServerStat
	for _, s := range ss {
		s.mu.Lock()
		if srv := s.srv; srv != nil {
			pl := srv.Pool()
			out = append(out, ServerStat{ConnStat: srv.Stat(), Database: pl.Database, User: pl.User, State: "active", ClientKeyPID: s.client.Key.PID})
		}
		s.mu.Unlock()
	}
	for _, pl := range p.opts.Pools.All() {
		for _, c := range pl.IdleConns() {
			out = append(out, ServerStat{ConnStat: c, Database: pl.Database, User: pl.User, State: "idle"})
		}
	}
	return out
}

// cancelRunning sends a cancel request for every statement still running
// (Shutdown's deadline), all at once, each within CancelTimeout: a server
// whose client is then cut would otherwise run the statement to its end,
// and commit it in autocommit, with nobody left to tell.
func (p *Proxy) cancelRunning() {
	p.mu.Lock()
	left := make([]*session, 0, len(p.sessions))
	for s := range p.sessions {
		left = append(left, s)
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range left {
		wg.Go(s.cancel)
	}
	wg.Wait()
}

// Shutdown stops accepting, closes idle clients at once and the others
// when their transaction ends; when ctx ends first the rest are closed.
// Pools are closed last.
func (p *Proxy) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	p.draining.Store(true)
	lns := p.ln
	p.mu.Unlock()
	p.stopAccept() // logins under way end at once
	p.endConsoles()
	for _, ln := range lns {
		ln.Close()
	}
	p.Resume()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	var err error
loop:
	for {
		p.mu.Lock()
		for s := range p.sessions {
			s.drain()
		}
		p.mu.Unlock()
		select {
		case <-done:
			break loop
		case <-t.C:
		case <-ctx.Done():
			err = ctx.Err()
			p.cancelRunning()
			p.mu.Lock()
			for s := range p.sessions {
				s.abort()
			}
			p.mu.Unlock()
			<-done
			break loop
		}
	}
	p.opts.Pools.Close()
	return err
}
