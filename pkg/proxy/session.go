// Session: one client's goroutine reading its messages and forwarding them to a server connection.

package proxy

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/qpkit/qpkit/pkg/netloop"
	"github.com/qpkit/qpkit/pkg/pgwire"
	"github.com/qpkit/qpkit/pkg/pool"
	"github.com/qpkit/qpkit/pkg/route"
)

type session struct {
	p      *Proxy
	client *pgwire.Client
	fr     *pgwire.Framer
	br     *bufio.Reader // from the client, under fr
	cw     *bufio.Writer // to the client; one writer at a time (see done)
	db     string
	user   string
	addr   string
	since  time.Time
	// routeGen is the default router's Generation when the session
	// joined its pool (see reroute).
	routeGen uint64
	// txBegan is when the client's first message since its last
	// transaction ended was planned (OnTransaction's duration), under mu.
	txBegan time.Time
	rename  bool // transaction or statement mode
	// stmtMode: statement mode, where a server's ReadyForQuery other than
	// 'I' ends the client (onServer).
	stmtMode bool
	pool     *pool.Pool

	cmu sync.Mutex // held while a cancel is being delivered
	// wmu is held while the client goroutine writes to the server: the
	// last bytes of a batch may be answered before the write returns, and
	// the server must not go to another client until it has.
	wmu sync.Mutex

	mu       sync.Mutex
	srv      *pool.Conn
	sst      *serverState
	queue    []entry
	qmem     []entry // queue's backing array from its start, reused once queue is empty
	skipping bool    // the server skips to Sync after an error
	// openRun: extended-protocol messages reached the server since its
	// last Sync, Query or function call. Until a Sync ends them the server
	// is inside their implicit transaction (or skipping to the Sync), so
	// it is not at rest even with every answer in and txStatus 'I'.
	openRun bool
	// srvClosed: a timeout or KILL_CLIENT closed srv under the session,
	// which must then never give it back to the pool, even if its last
	// answer was already read.
	srvClosed bool
	// relayGo: a goroutine relays srv's answer (relay). A timeout stops it
	// with a past read deadline on srv rather than a close, so that it can
	// finish a row it has begun to send before the client's FATAL
	// (finishAfterTimeout); the event loop's relay is stopped by the close.
	relayGo   bool
	finishing bool // relay goroutine only: reading the rest of a row after a timeout
	pinned    bool
	txStatus  byte
	waiting   bool
	waitSince time.Time // when waiting began
	// lastRequest: when the client's last message was planned (the
	// console's SHOW CLIENTS request_time).
	lastRequest time.Time
	// A cancel request for a client whose statement waits for a server
	// ends the wait (waitcancel.go): waitStop ends the goroutine's,
	// waitLoop is the loop the session waits on otherwise, and
	// waitCancelled says the cancel came.
	waitStop      context.CancelFunc
	waitLoop      *netloop.Loop
	waitCancelled bool
	ending        bool
	killed        *clientError  // a client timeout that ends the session (idle.go)
	stopClean     bool          // the server's answers stopped on a message boundary
	done          chan struct{} // closed when the current server goroutine ends
	// reading is set while a server goroutine runs. In transaction mode
	// there is none until needed: the client goroutine relays the
	// answers itself (relayInline) when nothing else can come first.
	reading    bool
	initial    []byte // ParameterStatus the client has not seen, sent before srv's answers
	stmts      map[string]*stmt
	unnamed    string
	unnamedOps []varOp
	// unnamedParams is the parameter-type section of the unnamed Parse;
	// unnamedValid says the client has an unnamed statement (PostgreSQL
	// drops it at a simple Query), unnamedLive that the current server
	// has the client's (transaction mode: another client may have
	// replaced it while the server was away).
	unnamedParams []byte
	unnamedValid  bool
	unnamedLive   bool
	// ucache is the client's unnamed statement while the servers keep it
	// prepared under a name (Options.CacheUnnamed); useen maps the unnamed
	// texts seen under the settings ucKey to their statements (nil: seen
	// once).
	ucache  *stmt
	uprev   []unnamedState // see entry.prev; emptied with the queue
	fc      fenceState     // fence.go
	useen   map[string]*stmt
	ucKey   string
	errBuf  []byte // a rewritten ErrorResponse (renameError), relay goroutine only
	portals map[string]portal
	// texts: session mode's named statements' texts, for the digests
	// (noteText); transaction mode keeps its statements in stmts.
	texts map[string]string
	// runs: the suspended portals' statements, to count each once
	// (portalRun).
	runs map[string]portalRun
	// runEvs: events of runs that ended without an answer of their own
	// (endRun), for onServer's caller to observe; bindSeq numbers Binds
	// (portal.seq).
	runEvs      []QueryEvent
	bindSeq     uint64
	vars        vars
	scsOff      atomic.Bool       // the client was told standard_conforming_strings = off (backslash)
	stalling    atomic.Bool       // a timeout closed the server: client writes get stalledClient each (stopRelay)
	slot        *pool.Pool        // a slot to connect in, granted to the wait on the loop (onGranted)
	pending     []varOp           // changes waiting for their transaction to end
	unsureVars  bool              // the server's settings are a guess (session.unsure)
	failed      bool              // an error since the last ReadyForQuery
	serverFatal bool              // the server sent a FATAL (or PANIC): its own last word
	poolName    string            // db/user: the pool's name before there is a server
	ev          QueryEvent        // what event returns a pointer to: no allocation per statement
	varsKey     string            // vars.key(), kept current with vars
	startKey    string            // vars.key() of the startup settings alone
	start       vars              // the startup settings (RESET returns to them); nil if none
	view        map[string]string // parameter values as the client knows them
	viewKey     string            // the pool.Conn.ParamsKey view agrees with; "": unknown
	viewShared  bool              // view is a server's Params map, read-only (setView copies it)
	// welcomeDefaults: the welcome server's Defaults (read-only), the
	// session start values of what the client did not set; welcomeKey
	// its pool.Conn.DefaultsKey (keepWelcome).
	welcomeDefaults map[string]string
	welcomeKey      string
	out             []byte
	dirty           *pool.Conn // written to, not yet flushed (client goroutine only)
	answered        bool       // local answered a message since the last Sync (client goroutine only)
	// localSkip: a cancelled wait answered an extended-protocol message
	// with an error; the client's messages up to its Sync are dropped, as
	// PostgreSQL drops them (client goroutine only).
	localSkip bool
	// cancelHeld: the loop handed back a session whose held message's
	// wait was cancelled; resume answers it (answerCancelled).
	cancelHeld bool
	// clientCopying is set from CopyInResponse until the client's
	// CopyDone or CopyFail: the server is kept even when the COPY failed
	// and ReadyForQuery came, so late CopyData cannot reach another client's server.
	clientCopying bool
	// copyEndsAhead: each CopyDone or CopyFail the client sent before
	// the server's CopyInResponse came, as the number of the last entry
	// queued then, oldest first: a pipeline (pgx) may hold several COPYs
	// with their data.
	copyEndsAhead []uint64

	lp loopState

	// msgs counts the messages read from the client while an idle
	// timeout is set (Proxy.idleOn), for the janitor; at the end, away
	// from the fields the relay uses.
	msgs   atomic.Uint64
	txEnds atomic.Uint64 // transactions ended (ReadyForQuery, idle), likewise
}

type portal struct {
	sql   string
	named bool
	ops   []varOp // settings its statement changes
	seq   uint64  // the Bind that made it (session.bindSeq)
}

func newSession(p *Proxy, cl *pgwire.Client) *session {
	done := make(chan struct{})
	close(done)
	db, user := cl.Startup.Params["database"], cl.Startup.Params["user"]
	mode := p.ModeFor(db, user)
	if db == "" {
		db = user
	}
	if p.opts.PoolBytes != nil {
		read, wrote := p.opts.PoolBytes(pool.NameOf(db, user))
		cl.Conn = pool.CountConn(cl.Conn, read, wrote)
	}
	s := &session{
		p:        p,
		client:   cl,
		br:       getReader(cl.Conn),
		db:       db,
		user:     user,
		addr:     cl.Conn.RemoteAddr().String(),
		since:    time.Now(),
		rename:   mode.PerTransaction(),
		stmtMode: mode == Statement,
		txStatus: 'I',
		done:     done,
		stmts:    make(map[string]*stmt),
		portals:  make(map[string]portal),
		vars:     make(vars),
	}
	s.cw = getWriter(clientWriter{s})
	s.fr = pgwire.NewFramer(s.br, p.opts.MaxMessage)
	s.poolName = pool.NameOf(s.db, s.user)
	// PostgreSQL applies the options first, then the other parameters.
	// Keys lower-case, as SET, RESET and ParameterStatus name them (JDBC
	// sends DateStyle and TimeZone spelled so).
	for k, v := range optionSettings(cl.Startup.Params["options"]) {
		s.vars[strings.ToLower(k)] = "SELECT pg_catalog.set_config(" + quoteLiteral(k) + ", " + quoteLiteral(v) + ", false)"
	}
	for k, v := range cl.Startup.Params {
		switch k {
		case "user", "database", "options", "replication":
			continue
		}
		s.vars[strings.ToLower(k)] = "SELECT pg_catalog.set_config(" + quoteLiteral(k) + ", " + quoteLiteral(v) + ", false)"
	}
	s.varsKey = s.vars.key()
	s.startKey = s.varsKey
	if len(s.vars) > 0 {
		s.start = maps.Clone(s.vars)
	}
	return s
}

// Client buffers are reused across sessions: a client that connects for
// one transaction (pgbench -C) would otherwise allocate 64 KiB.
var (
	readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 32<<10) }}
	writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 32<<10) }}
)

func getReader(c net.Conn) *bufio.Reader {
	r := readers.Get().(*bufio.Reader)
	r.Reset(c)
	return r
}

func getWriter(c io.Writer) *bufio.Writer {
	w := writers.Get().(*bufio.Writer)
	w.Reset(c)
	return w
}

// release gives the client buffers back once nothing uses the session.
func (s *session) release() {
	s.br.Reset(nil)
	readers.Put(s.br)
	s.cw.Reset(nil)
	writers.Put(s.cw)
	s.br, s.cw, s.fr = nil, nil, nil
}

// optionSettings reads the "-c name=value" and "--name=value" settings of
// the options startup parameter (words split on spaces, a backslash
// escaping the next character, as PostgreSQL does).
func optionSettings(options string) map[string]string {
	if options == "" {
		return nil
	}
	var words []string
	var b strings.Builder
	esc, in := false, false
	for i := 0; i < len(options); i++ {
		ch := options[i]
		switch {
		case esc:
			b.WriteByte(ch)
			esc, in = false, true
		case ch == '\\':
			esc, in = true, true
		case ch == ' ' || ch == '\t':
			if in {
				words = append(words, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteByte(ch)
			in = true
		}
	}
	if in {
		words = append(words, b.String())
	}
	out := make(map[string]string)
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-c" && i+1 < len(words):
			i++
			w = words[i]
		case strings.HasPrefix(w, "-c"):
			w = w[2:]
		case strings.HasPrefix(w, "--"):
			w = w[2:]
		default:
			continue
		}
		if name, value, ok := strings.Cut(w, "="); ok && name != "" {
			out[strings.ToLower(strings.ReplaceAll(name, "-", "_"))] = value
		}
	}
	return out
}

func (s *session) stat() ClientStat {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ClientStat{Addr: s.addr, User: s.user, Database: s.db, State: "idle", Pinned: s.pinned, ConnectedSince: s.since, LastRequest: s.lastRequest,
		Application: s.client.Startup.Params["application_name"], TLS: s.client.Startup.TLS, KeyPID: s.client.Key.PID}
	if la := s.client.Conn.LocalAddr(); la != nil && la.Network() == "tcp" {
		st.LocalAddr = la.String()
	}
	switch {
	case s.waiting:
		st.State = "waiting"
		st.WaitingSince = s.waitSince
		if s.waitSince.After(st.LastRequest) {
			// plan records a message once it has a server: the one
			// the client waits with came when the wait began.
			st.LastRequest = s.waitSince
		}
	case !s.settled():
		st.State = "active"
	}
	if s.srv != nil {
		st.ServerPID = s.srv.PID
	}
	if s.pool != nil {
		st.Pool = s.pool.Name()
	}
	return st
}

// errTerminate ends a session normally.
var errTerminate = errors.New("terminate")

// clientError is reported to the client before its connection closes.
type clientError struct{ code, msg string }

func (e *clientError) Error() string { return e.msg }

// sessionLog carries the client's identity in the rare lines a session
// logs; made when needed, since slog's With costs more than a short
// connection's other bookkeeping.
type sessionLog struct{ s *session }

func (l sessionLog) get() *slog.Logger {
	return l.s.p.log.With("client", l.s.addr, "db", l.s.db, "user", l.s.user)
}
func (l sessionLog) Warn(msg string, args ...any) { l.get().Warn(msg, args...) }
func (l sessionLog) Debug(msg string, args ...any) {
	if l.s.p.log.Enabled(context.Background(), slog.LevelDebug) {
		l.get().Debug(msg, args...)
	}
}

// run serves the session on this goroutine until it ends: from the
// welcome, or after it when the loop sent it (welcomed), and when the
// loop handed the session over (handed) by first taking back, as park
// takes it.
func (s *session) run(welcomed, handed bool, back error) {
	log := sessionLog{s}
	var final *clientError
	defer func() {
		if r := recover(); r != nil {
			log.Warn("proxy: session panicked", "panic", r)
			final = &clientError{"XX000", "qprouter: internal error"}
		}
		s.end(final)
	}()
	if !welcomed {
		if err := s.welcome(); err != nil {
			log.Debug("proxy: welcome failed", "err", err)
			return
		}
	}
	for {
		if handed {
			handed = false
			if err := s.resume(back); err != nil {
				final = s.finalOf(err)
				return
			}
		} else if s.parkable() {
			if err := s.park(); err != nil {
				final = s.finalOf(err)
				return
			}
		} else {
			typ, body, err := s.fr.Next()
			s.counted()
			if err != nil {
				if k := s.killedErr(); k != nil {
					final = k
					return
				}
				// Messages read before the bad frame or the end of the
				// stream still reach the server, as PostgreSQL runs what
				// it read before.
				s.flushServer()
				var oe *pgwire.OversizeError
				var fe *pgwire.FrameError
				switch {
				case errors.As(err, &oe), errors.As(err, &fe):
					log.Warn("proxy: protocol error from client", "err", err)
					final = &clientError{"08P01", "qprouter: " + err.Error()}
				case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
				default:
					log.Debug("proxy: client read", "err", err)
				}
				return
			}
			if err := s.handle(typ, body, s.fr.Message()); err != nil {
				// A Query sent with Terminate in one write (COMMIT, then
				// X) is sent before the session ends: a direct server runs
				// it too.
				s.flushServer()
				final = s.finalOf(err)
				return
			}
		}
		if s.fr.Buffered() == 0 {
			if s.answered {
				s.mu.Lock()
				if s.srv == nil {
					s.cw.Flush() // otherwise the server goroutine flushes
				}
				s.mu.Unlock()
			}
			if err := s.flushServer(); err != nil {
				log.Debug("proxy: server write", "err", err)
				return
			}
			s.relayInline()
		}
	}
}

// finalOf logs the error that ends the session and returns what the
// client is told, if anything.
func (s *session) finalOf(err error) *clientError {
	log := sessionLog{s}
	var ce *clientError
	if errors.As(err, &ce) {
		if ce.code == "08P01" {
			log.Warn("proxy: protocol error from client", "err", ce.msg)
		} else {
			log.Debug("proxy: session ends", "err", ce.msg)
		}
		return ce
	} else if err != errTerminate {
		log.Debug("proxy: session ends", "err", err)
	}
	return nil
}

// welcome acquires a server for the client's parameters and sends them.
func (s *session) welcome() error {
	s.routeGen = s.p.routeGen()
	pl, err := s.p.joinPool(route.Request{Database: s.db, User: s.user, ClientAddr: s.addr})
	if err != nil {
		pgwire.WriteError(s.client.Conn, "FATAL", sqlstateOf(err), "qprouter: "+err.Error())
		return err
	}
	s.pool = pl
	srv, err := s.acquire(pl)
	if err != nil {
		pgwire.WriteError(s.client.Conn, "FATAL", sqlstateOf(err), "qprouter: "+err.Error())
		return err
	}
	if err := s.syncServer(srv); err != nil {
		var se *pool.ServerError
		if errors.As(err, &se) {
			// A startup setting the server refuses refuses the login,
			// as PostgreSQL does (42704 for an unknown name).
			pl.Release(srv)
			pgwire.WriteError(s.client.Conn, "FATAL", se.Code, se.Message)
			return err
		}
		pl.Discard(srv)
		pgwire.WriteError(s.client.Conn, "FATAL", "08006", "qprouter: "+err.Error())
		return err
	}
	if !s.rename {
		s.p.takeServerPID(s, srv.PID)
	}
	if err := s.sendWelcome(srv, srv.State.(*serverState)); err != nil { // syncServer set State
		pl.Release(srv)
		return err
	}
	if s.rename {
		pl.Release(srv)
		return nil
	}
	s.attach(srv)
	return nil
}

// sendWelcome sends the client srv's parameters (encoded once per server
// parameter set, in sst), its cancel key and ReadyForQuery, and records
// what the client was told.
func (s *session) sendWelcome(srv *pool.Conn, sst *serverState) error {
	key := srv.ParamsKey()
	if sst.statusKey != key {
		sst.status = pgwire.AppendParameterStatuses(sst.status[:0], srv.Params)
		sst.statusKey = key
	}
	s.view, s.viewKey, s.viewShared = srv.Params, key, true
	s.welcomeDefaults, s.welcomeKey = srv.Defaults, srv.DefaultsKey()
	s.scsOff.Store(srv.Params["standard_conforming_strings"] == "off")
	return s.client.WelcomeStatus(sst.status)
}

func sqlstateOf(err error) string {
	if errors.Is(err, pool.ErrTimeout) || errors.Is(err, pool.ErrTooManyClients) {
		return "53300"
	}
	var pe interface{ SQLState() string }
	if errors.As(err, &pe) {
		return pe.SQLState()
	}
	return "08006"
}

// acquire gets a server connection, honouring Pause, and reports the
// wait. A cancel request meanwhile ends it with errWaitCancelled.
func (s *session) acquire(pl *pool.Pool) (*pool.Conn, error) {
	s.mu.Lock()
	since := time.Now() // the wait reported: from the loop's, for a statement in transit
	if s.waiting && !s.waitSince.IsZero() {
		since = s.waitSince
	}
	if s.waitCancelled { // came while the statement passed from the loop (inTransit)
		s.waiting, s.waitCancelled = false, false
		s.mu.Unlock()
		s.returnSlot()
		return nil, errWaitCancelled
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	s.waiting, s.waitSince, s.waitStop = true, since, stop
	s.mu.Unlock()
	var srv *pool.Conn
	var err error
	if s.slot == pl && !s.p.held(pl.Name()) {
		// the loop's wait was granted a slot: connect in it, within the
		// acquire timeout as Acquire would
		s.slot = nil
		octx, cancel := context.WithTimeout(ctx, pl.Config().AcquireTimeout)
		srv, err = pl.OpenSlot(octx)
		cancel()
		if s.p.opts.OnAcquire != nil {
			s.p.opts.OnAcquire(pl.Name(), time.Since(since), err)
		}
	} else {
		s.returnSlot()
		if err = s.p.waitResumed(ctx, pl); err == nil {
			srv, err = pl.Acquire(ctx)
			if s.p.opts.OnAcquire != nil {
				s.p.opts.OnAcquire(pl.Name(), time.Since(since), err)
			}
		}
	}
	s.mu.Lock()
	cancelled := s.waitCancelled
	s.waiting, s.waitStop, s.waitCancelled = false, nil, false
	s.mu.Unlock()
	if cancelled {
		if err == nil {
			pl.Release(srv) // granted as the cancel came: unused
		}
		return nil, errWaitCancelled
	}
	return srv, err
}

// unknownVars is a server's varsKey when what it has is not known: no
// client's key equals it, so the next one gets RESET ALL and a replay.
const unknownVars = "\x00unknown"

// syncServer replays the client's settings on srv when they differ from
// what srv has. A setting the server refuses is returned as the
// *pool.ServerError: at the startup it refuses the login, later it ends
// the session (the server is left in an unknown state and discarded).
func (s *session) syncServer(srv *pool.Conn) error {
	sst, _ := srv.State.(*serverState)
	if sst == nil {
		sst = newServerState()
		srv.State = sst
	}
	want := s.varsKey
	if sst.varsKey == want {
		return nil
	}
	q := resetAll + want
	if s.p.opts.OnReplay != nil {
		s.p.opts.OnReplay()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := srv.Exec(ctx, q)
	var se *pool.ServerError
	if errors.As(err, &se) && (s.vars["role"] != "" || s.vars["session_authorization"] != "") {
		// Refused in one order (a setting needing privileges the role
		// gives, or took away): the other order, as one of them is the
		// client's own.
		st, err = srv.Exec(ctx, resetAll+s.vars.replay(true))
	}
	if errors.As(err, &se) {
		// The replay is one implicit transaction: its failure also undid
		// the reset, so the server still has the previous client's
		// settings and role. The caller must not use it.
		s.p.log.Debug("proxy: settings replay failed", "err", err)
		sst.varsKey = unknownVars
		return err
	}
	if err != nil {
		return err
	}
	if st != 'I' {
		return fmt.Errorf("settings replay left the server in status %q", st)
	}
	sst.varsKey = want
	return nil
}

// setView records that the client was told name = value. view starts as
// the welcome server's own Params, which are never changed in place; the
// first change makes the session its own copy.
func (s *session) setView(name, value string) {
	if s.viewShared {
		s.view = maps.Clone(s.view)
		s.viewShared = false
	}
	s.view[name] = value
	if name == "standard_conforming_strings" {
		s.scsOff.Store(value == "off")
	}
}

// keptSettings are the reported settings a client keeps from its welcome
// when a server of its pool reports other defaults (an ALTER DATABASE
// ... SET since, hosts configured apart), as PgBouncer keeps them: the
// session's TimeZone must not change under it.
var keptSettings = []string{"application_name", "client_encoding", "DateStyle", "IntervalStyle", "standard_conforming_strings", "TimeZone"}

// welcomeDiffers tells whether srv's own defaults give one of
// keptSettings another value than the welcome server's did, for a
// setting whose session start value the client does not have yet in
// s.start (its startup value, or a kept welcome value). What a previous
// client set on srv does not count: it is replayed away.
func (s *session) welcomeDiffers(srv *pool.Conn) bool {
	if s.welcomeDefaults == nil || srv.DefaultsKey() == s.welcomeKey {
		return false
	}
	for _, k := range keptSettings {
		// Only what the welcome reported: keepWelcome can keep nothing
		// else, and the loop would then refuse every server for good.
		if v, seen := s.welcomeDefaults[k]; seen && srv.Defaults[k] != v {
			if _, kept := s.start[strings.ToLower(k)]; !kept {
				return true
			}
		}
	}
	return false
}

// keepWelcome makes the client's session start values of keptSettings
// that srv's defaults give otherwise part of its start settings (what
// RESET returns to, as PostgreSQL keeps a session's reset values from
// its start), and of its settings where it has not set them itself
// (replayed from now on), in transaction and statement mode, before
// syncServer.
func (s *session) keepWelcome(srv *pool.Conn) {
	if !s.rename || !s.welcomeDiffers(srv) {
		return
	}
	for _, k := range keptSettings {
		lk := strings.ToLower(k)
		v, seen := s.welcomeDefaults[k]
		if _, kept := s.start[lk]; kept || !seen || srv.Defaults[k] == v {
			continue
		}
		stmt := "SELECT pg_catalog.set_config(" + quoteLiteral(lk) + ", " + quoteLiteral(v) + ", false)"
		if s.start == nil {
			s.start = make(vars)
		}
		s.start[lk] = stmt
		if _, own := s.vars[lk]; !own {
			s.vars[lk] = stmt
		}
	}
	s.varsKey = s.vars.key()
}

// attach makes srv the session's server and starts its goroutine, which
// first sends the ParameterStatus changes the client has not seen.
func (s *session) attach(srv *pool.Conn) {
	var initial []byte
	if key := srv.ParamsKey(); key != s.viewKey {
		for k, v := range srv.Params {
			if s.view[k] != v {
				initial = pgwire.AppendParameterStatus(initial, k, v)
				s.setView(k, v)
			}
		}
		s.viewKey = key
	}
	s.mu.Lock()
	s.srv = srv
	s.sst = srv.State.(*serverState)
	s.stopClean = true // nothing sent yet
	s.unnamedLive = false
	s.initial = initial
	if !s.rename {
		s.startReader() // session mode: notifications may come at any time
	}
	s.mu.Unlock()
}

// startReader starts the server goroutine for s.srv, with s.mu held; it
// writes to the client only after the previous one has ended.
func (s *session) startReader() {
	prev := s.done
	done := make(chan struct{})
	s.done = done
	s.reading = true
	s.stopClean = false
	initial := s.initial
	s.initial = nil
	go s.serverLoop(s.srv, prev, done, initial)
}

// relayInline relays, in transaction mode, the answers to what the client
// goroutine has just sent, when they end in ReadyForQuery and the server
// needs nothing more from the client meanwhile; one goroutine then serves
// the whole round trip. Otherwise (a Flush without Sync, pinned, COPY) the
// server goroutine takes over until the server goes back.
func (s *session) relayInline() {
	s.mu.Lock()
	srv := s.srv
	if !s.rename || srv == nil || s.reading || len(s.queue) == 0 {
		s.mu.Unlock()
		return
	}
	last := s.queue[len(s.queue)-1].kind
	if (last != kSync && last != kQuery) || s.pinned || s.clientCopying {
		s.startReader()
		s.mu.Unlock()
		return
	}
	initial := s.initial
	s.initial = nil
	s.mu.Unlock()
	if !s.relay(srv, initial, true) {
		return // released, or failed and the client closed
	}
	// Still ours: between statements of a transaction nothing comes from
	// the server unasked, but a pinned or copying client needs a reader.
	s.mu.Lock()
	if s.srv == srv && !s.reading && (s.pinned || s.clientCopying || s.txStatus == 'I') {
		s.startReader()
	}
	s.mu.Unlock()
}

// reroute moves a transaction-mode session between transactions to the
// pool the default router gives it after a reload (generation gen), as
// PgBouncer renames a database's forced user in place: a client whose
// database's forced user changed logs in as the new one from its next
// transaction, and one whose forced user went as itself. Before, it kept
// its pool, and with it the old forced user, for as long as it stayed. A
// database that has no server any more ends the session (3D000).
func (s *session) reroute(gen uint64) error {
	r := route.Request{Database: s.db, User: s.user, ClientAddr: s.addr}
	pl, err := s.p.router.Route(context.Background(), r)
	if err != nil {
		return &clientError{sqlstateOf(err), "qprouter: " + err.Error()}
	}
	if pl == s.pool {
		// Most reloads: the same pool, already joined (joining it again
		// would count the client twice against its cap).
		s.routeGen = gen
		return nil
	}
	if pl, err = s.p.joinPool(r); err != nil {
		return &clientError{sqlstateOf(err), "qprouter: " + err.Error()}
	}
	s.mu.Lock()
	old := s.pool
	s.pool, s.routeGen = pl, gen
	s.mu.Unlock()
	if old != nil {
		old.Leave()
	}
	return nil
}

// lockServer returns the session's server with s.mu held, acquiring one
// (transaction mode) when it has none.
func (s *session) lockServer(sql string) (*pool.Conn, error) {
	for {
		s.mu.Lock()
		if s.srv != nil {
			return s.srv, nil
		}
		prev := s.done
		s.mu.Unlock()
		<-prev // the last server goroutine has finished writing to the client
		if !s.rename {
			return nil, errors.New("session lost its server")
		}
		if pools, byUser := s.p.router.(*route.Pools); byUser {
			if g := pools.Generation(); g != s.routeGen {
				if err := s.reroute(g); err != nil {
					return nil, err
				}
			}
		}
		pl := s.pool
		if _, byUser := s.p.router.(*route.Pools); !byUser {
			// Another router may pick a pool per transaction; the
			// default one always gives the pool of the welcome.
			var err error
			pl, err = s.p.router.Route(context.Background(), route.Request{Database: s.db, User: s.user, ClientAddr: s.addr, SQL: sql})
			if err != nil {
				return nil, &clientError{sqlstateOf(err), "qprouter: " + err.Error()}
			}
		}
		if s.lp.inLoop {
			if srv := s.loopAcquire(pl); srv != nil {
				s.attach(srv)
				continue
			}
			if !s.p.pausing.Load() && s.waitServer(pl) {
				return nil, errWaitServer
			}
			return nil, errNeedGoroutine
		}
		srv, err := s.acquire(pl)
		if err == errWaitCancelled {
			return nil, err
		}
		if err != nil {
			return nil, &clientError{sqlstateOf(err), "qprouter: " + err.Error()}
		}
		s.keepWelcome(srv)
		if err := s.syncServer(srv); err != nil {
			pl.Discard(srv)
			var se *pool.ServerError
			if errors.As(err, &se) {
				return nil, &clientError{se.Code, "qprouter: this session's settings could not be restored on another server connection: " + se.Message}
			}
			return nil, &clientError{"08006", "qprouter: " + err.Error()}
		}
		s.attach(srv)
	}
}

// handle forwards one client message.
func (s *session) handle(typ byte, body, raw []byte) error {
	switch typ {
	case 'X':
		return errTerminate
	case 'Q', 'P', 'B', 'D', 'E', 'C', 'S', 'H', 'F', 'd', 'c', 'f':
	default:
		return &clientError{"08P01", fmt.Sprintf("qprouter: invalid frontend message type %q", typ)}
	}
	if s.localSkip {
		return s.skipLocally(typ)
	}
	sql := ""
	switch typ {
	case 'Q':
		sql, _, _ = cstring(body)
	case 'P', 'B', 'D':
		sql = s.routeText(typ, body)
	case 'H', 'd', 'c', 'f':
		// Without a server nothing waits for these: drop them rather
		// than acquire one.
		s.mu.Lock()
		held := s.srv != nil
		s.mu.Unlock()
		if !held {
			return nil
		}
	}
	if s.rename {
		s.mu.Lock()
		idle := s.srv == nil && len(s.queue) == 0
		s.mu.Unlock()
		if idle {
			if done, err := s.local(typ, body); done {
				return err
			}
		}
	}
	srv, err := s.lockServer(sql)
	if err == errWaitCancelled {
		return s.answerCancelled(typ)
	}
	if err != nil {
		return err
	}
	for s.rename && s.mustWait(typ, body) {
		s.mu.Unlock()
		if s.lp.inLoop {
			return errNeedGoroutine // serveMessages waits there first; not reached
		}
		s.p.fenceWaits.Add(1)
		if err := s.awaitFence(); err != nil {
			return err
		}
		if srv, err = s.lockServer(sql); err == errWaitCancelled {
			return s.answerCancelled(typ)
		} else if err != nil {
			return err
		}
	}
	s.answered = false // the server answers from here on
	out, err := s.planLocked(typ, body, raw)
	s.out = out[:0]
	if cap(s.out) > 1<<20 {
		s.out = nil // not kept after one big message
	}
	s.mu.Unlock()
	if err != nil || len(out) == 0 {
		return err
	}
	// srv stays ours while bytes we wrote for it are unanswered; once the
	// last of them is on the wire it may go back to the pool at any
	// moment, so it is not touched after that.
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if len(out) > srv.W.Available() {
		if err := srv.W.Flush(); err != nil {
			return s.serverWriteFailed(srv, err)
		}
	}
	if len(out) > srv.W.Available() {
		s.dirty = nil
		if _, err := srv.Net.Write(out); err != nil {
			return s.serverWriteFailed(srv, err)
		}
		return nil
	}
	srv.W.Write(out) // fits: only buffered
	s.dirty = srv
	return nil
}

// local answers, in transaction mode without a server, the messages that
// need none: Parse and Close of named statements (the statement is only
// recorded; the server gets it with the first Bind or Describe, so syntax
// errors surface there), and the Sync or Flush after them. Clients that
// prepare synchronously (libpq's PQprepare, as pgbench -M prepared does)
// then never wait for a server just to prepare.
func (s *session) local(typ byte, body []byte) (bool, error) {
	switch typ {
	case 'P':
		name, rest, ok := cstring(body)
		if !ok || name == "" {
			return false, nil
		}
		query, params, ok := cstring(rest)
		if !ok || !s.onlyPreparesAhead() {
			return false, nil
		}
		<-s.done // the last server goroutine has finished writing to the client
		s.mu.Lock()
		_, exists := s.stmts[name]
		s.mu.Unlock()
		if exists {
			return false, nil // the server answers 42P05 (plan)
		}
		s.mu.Lock()
		st := newStmtFor(name, query, params, s.stmtKey())
		st.born = s.p.stmtSeq.Add(1)
		st.ops = varOps(query, s.backslash())
		s.stmts[name] = st
		if pins(query, s.backslash()) {
			s.pinned = true
		}
		s.mu.Unlock()
		s.cw.Write([]byte{'1', 0, 0, 0, 4})
		s.answered = true
		return true, nil
	case 'C':
		if len(body) < 2 || body[0] != 'S' {
			return false, nil
		}
		name, _, ok := cstring(body[1:])
		if !ok || name == "" {
			return false, nil
		}
		<-s.done
		s.mu.Lock()
		delete(s.stmts, name)
		s.mu.Unlock()
		s.cw.Write([]byte{'3', 0, 0, 0, 4})
		s.answered = true
		return true, nil
	case 'S':
		if !s.answered {
			return false, nil
		}
		s.answered = false
		s.cw.Write(readyIdle)
		return true, s.cw.Flush()
	case 'H':
		if !s.answered {
			return false, nil
		}
		return true, s.cw.Flush()
	}
	return false, nil
}

// onlyPreparesAhead reports whether every message the client has already
// sent behind the current one is a named Parse or Close, a Sync or a
// Flush. Only then is a named Parse answered without a server: with a
// Bind, Describe, Execute or Query in the same write a server is taken
// anyway, and taking it at the Parse lets a syntax error come back there,
// where PostgreSQL reports it, instead of at the Bind or Describe.
func (s *session) onlyPreparesAhead() bool {
	buf, _ := s.br.Peek(s.br.Buffered())
	for len(buf) > 0 {
		if len(buf) < 5 {
			return false // not known yet: the server decides
		}
		switch buf[0] {
		case 'S', 'H':
		case 'P':
			if len(buf) < 6 || buf[5] == 0 {
				return false // the unnamed statement, or not known yet
			}
		case 'C':
			if len(buf) < 7 || buf[5] != 'S' || buf[6] == 0 {
				return false
			}
		default:
			return false
		}
		n := 1 + int(binary.BigEndian.Uint32(buf[1:5]))
		if n < 5 || n > len(buf) {
			return n > len(buf) // a named Parse or Close still arriving
		}
		buf = buf[n:]
	}
	return true
}

// flushServer sends what handle buffered for the server.
func (s *session) flushServer() error {
	srv := s.dirty
	s.dirty = nil
	if srv == nil {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := srv.W.Flush(); err != nil {
		return s.serverWriteFailed(srv, err)
	}
	return nil
}

// serverWriteFailed closes srv after a failed write, so that its relay
// ends too, and returns err; unless a timeout failed the write (its past
// write deadline), and the relay, finishing a row it has begun to send,
// owns srv.
func (s *session) serverWriteFailed(srv *pool.Conn, err error) error {
	if !s.stalling.Load() {
		srv.Net.Close()
	}
	return err
}

func containsFold(s, sub string) bool {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		if (s[i]|0x20) == sub[0] && equalFoldASCII(s[i:i+n], sub) {
			return true
		}
	}
	return false
}

func equalFoldASCII(a, b string) bool {
	for i := 0; i < len(a); i++ {
		if a[i]|0x20 != b[i]|0x20 {
			return false
		}
	}
	return true
}
