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

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/qpkit/qpkit/pkg/pgwire"
	"github.com/qpkit/qpkit/pkg/pool"
	"github.com/qpkit/qpkit/pkg/route"
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
	sql    string    // Query and Execute: text for OnQuery
	named  bool      // Execute of a named statement
	start  time.Time // Query and Execute: when forwarded
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
	// fresh: for a Parse of a name in use (renameError), the statement it
	// parses, the client's should the name turn out free after all (a
	// Parse of it pipelined before this one failed).
	fresh *stmt
	// probe: a Parse and its Sync that the proxy sends on its own, ahead
	// of a client's Query, answers and error alike kept from the client
	// (see session.probe).
	probe bool
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
	stmts   *simplelru.LRU[string, struct{}] // renamed statements it has
	varsKey string                           // vars.key() of the settings applied
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
	st.closeBefore[name] = seq
}

func newServerState() *serverState {
	lru, _ := simplelru.NewLRU[string, struct{}](1<<30, nil)
	return &serverState{stmts: lru}
}

// dummyClose is the statement name of a Close sent only for its
// CloseComplete. Nothing stays prepared under it: a Parse under it (to
// have the server judge a text) is always followed by its Close.
const dummyClose = "qpr_none"

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

	mu        sync.Mutex
	srv       *pool.Conn
	sst       *serverState
	queue     []entry
	qmem      []entry // queue's backing array from its start, reused once queue is empty
	skipping  bool    // the server skips to Sync after an error
	pinned    bool
	txStatus  byte
	waiting   bool
	waitSince time.Time // when waiting began
	ending    bool
	killed    *clientError  // a client timeout that ends the session (idle.go)
	stopClean bool          // the server's answers stopped on a message boundary
	done      chan struct{} // closed when the current server goroutine ends
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
	ucache      *stmt
	uprev       []unnamedState // see entry.prev; emptied with the queue
	fc          fenceState     // fence.go
	useen       map[string]*stmt
	ucKey       string
	errBuf      []byte // a rewritten ErrorResponse (renameError), relay goroutine only
	portals     map[string]portal
	vars        vars
	pending     []varOp // changes waiting for their transaction to end
	failed      bool    // an error since the last ReadyForQuery
	serverFatal bool    // the server sent a FATAL (or PANIC): its own last word
	lastCmd     string
	poolName    string            // db/user: the pool's name before there is a server
	ev          QueryEvent        // what event returns a pointer to: no allocation per statement
	varsKey     string            // vars.key(), kept current with vars
	startKey    string            // vars.key() of the startup settings alone
	view        map[string]string // parameter values as the client knows them
	viewKey     string            // the pool.Conn.ParamsKey view agrees with; "": unknown
	viewShared  bool              // view is a server's Params map, read-only (setView copies it)
	out         []byte
	dirty       *pool.Conn // written to, not yet flushed (client goroutine only)
	answered    bool       // local answered a message since the last Sync (client goroutine only)
	// clientCopying is set from CopyInResponse until the client's
	// CopyDone or CopyFail: the server is kept even when the COPY failed
	// and ReadyForQuery came, so late CopyData cannot reach another client's server.
	clientCopying bool

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
		read, wrote := p.opts.PoolBytes(db + "/" + user)
		cl.Conn = pool.CountConn(cl.Conn, read, wrote)
	}
	s := &session{
		p:        p,
		client:   cl,
		br:       getReader(cl.Conn),
		cw:       getWriter(cl.Conn),
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
	s.fr = pgwire.NewFramer(s.br, p.opts.MaxMessage)
	s.poolName = s.db + "/" + s.user
	// PostgreSQL applies the options first, then the other parameters.
	for k, v := range optionSettings(cl.Startup.Params["options"]) {
		s.vars[k] = "SELECT pg_catalog.set_config(" + quoteLiteral(k) + ", " + quoteLiteral(v) + ", false)"
	}
	for k, v := range cl.Startup.Params {
		switch k {
		case "user", "database", "options", "replication":
			continue
		}
		s.vars[k] = "SELECT pg_catalog.set_config(" + quoteLiteral(k) + ", " + quoteLiteral(v) + ", false)"
	}
	s.varsKey = s.vars.key()
	s.startKey = s.varsKey
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

func getWriter(c net.Conn) *bufio.Writer {
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
	st := ClientStat{Addr: s.addr, User: s.user, Database: s.db, State: "idle", Pinned: s.pinned, ConnectedSince: s.since,
		Application: s.client.Startup.Params["application_name"], TLS: s.client.Startup.TLS, KeyPID: s.client.Key.PID}
	if la := s.client.Conn.LocalAddr(); la != nil && la.Network() == "tcp" {
		st.LocalAddr = la.String()
	}
	switch {
	case s.waiting:
		st.State = "waiting"
		st.WaitingSince = s.waitSince
	case len(s.queue) > 0 || s.txStatus != 'I':
		st.State = "active"
	}
	if s.srv != nil {
		st.ServerPID = s.srv.PID
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
	pl, err := s.p.router.Route(context.Background(), route.Request{Database: s.db, User: s.user, ClientAddr: s.addr})
	if err != nil {
		pgwire.WriteError(s.client.Conn, "FATAL", sqlstateOf(err), "qprouter: "+err.Error())
		return err
	}
	if err := pl.Join(); err != nil {
		pgwire.WriteError(s.client.Conn, "FATAL", "53300", "qprouter: "+err.Error())
		return err
	}
	s.pool = pl
	srv, err := s.acquire(pl)
	if err != nil {
		pgwire.WriteError(s.client.Conn, "FATAL", sqlstateOf(err), "qprouter: "+err.Error())
		return err
	}
	if err := s.syncServer(srv, true); err != nil {
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
	return s.client.WelcomeStatus(sst.status)
}

func sqlstateOf(err error) string {
	if errors.Is(err, pool.ErrTimeout) {
		return "53300"
	}
	var pe interface{ SQLState() string }
	if errors.As(err, &pe) {
		return pe.SQLState()
	}
	return "08006"
}

// acquire gets a server connection, honouring Pause, and reports the wait.
func (s *session) acquire(pl *pool.Pool) (*pool.Conn, error) {
	t0 := time.Now()
	s.mu.Lock()
	s.waiting, s.waitSince = true, t0
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.waiting = false
		s.mu.Unlock()
	}()
	if err := s.p.waitResumed(context.Background(), pl); err != nil {
		return nil, err
	}
	srv, err := pl.Acquire(context.Background())
	if s.p.opts.OnAcquire != nil {
		s.p.opts.OnAcquire(pl.Name(), time.Since(t0))
	}
	return srv, err
}

// syncServer replays the client's settings on srv when they differ from
// what srv has. A setting the server refuses is logged, or, when strict
// (the startup), returned as the *pool.ServerError.
func (s *session) syncServer(srv *pool.Conn, strict bool) error {
	sst, _ := srv.State.(*serverState)
	if sst == nil {
		sst = newServerState()
		srv.State = sst
	}
	want := s.varsKey
	if sst.varsKey == want {
		return nil
	}
	q := "RESET ALL;\n" + want
	if s.p.opts.OnReplay != nil {
		s.p.opts.OnReplay()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := srv.Exec(ctx, q)
	var se *pool.ServerError
	if errors.As(err, &se) {
		s.p.log.Debug("proxy: settings replay failed", "err", err)
		sst.varsKey = "\x00unknown"
		if strict {
			return err
		}
		return nil
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
		if err != nil {
			return nil, &clientError{sqlstateOf(err), "qprouter: " + err.Error()}
		}
		if err := s.syncServer(srv, false); err != nil {
			pl.Discard(srv)
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
	sql := ""
	switch typ {
	case 'Q':
		sql, _, _ = cstring(body)
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
		if srv, err = s.lockServer(sql); err != nil {
			return err
		}
	}
	s.answered = false // the server answers from here on
	out, err := s.plan(typ, body, raw)
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
			srv.Net.Close()
			return err
		}
	}
	if len(out) > srv.W.Available() {
		s.dirty = nil
		if _, err := srv.Net.Write(out); err != nil {
			srv.Net.Close()
			return err
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
		st := newStmt(name, query, params)
		st.born = s.p.stmtSeq.Add(1)
		st.ops = varOps(query)
		s.mu.Lock()
		s.stmts[name] = st
		if pins(query) {
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
		s.cw.Write([]byte{'Z', 0, 0, 0, 5, 'I'})
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
		srv.Net.Close()
		return err
	}
	return nil
}

// plan decides, with s.mu held, what goes to the server for one client
// message and which answers to expect.
func (s *session) plan(typ byte, body, raw []byte) ([]byte, error) {
	out := s.out[:0]
	bad := errMalformed[typ]
	if bad == nil {
		bad = &clientError{"08P01", fmt.Sprintf("qprouter: malformed %q message", typ)}
	}
	if s.skipping && typ != 'S' {
		return out, nil // the server ignores it until Sync; so do we
	}
	now := time.Now()
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
		s.skipping = false
		s.push(entry{kind: kSync})
		return append(out, raw...), nil
	case 'H':
		if n := len(s.queue); n == 0 || s.queue[n-1].kind == kSync || s.queue[n-1].kind == kQuery {
			return out, nil // a Sync or Query already makes the server answer
		}
		return append(out, raw...), nil
	case 'd', 'c', 'f':
		if typ != 'd' {
			s.clientCopying = false
		}
		if len(s.queue) == 0 {
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
				s.unnamedOps = varOps(query)
				s.unnamedParams = append(s.unnamedParams[:0], params...)
				s.unnamedValid, s.unnamedLive = true, true
			}
		}
		if s.rename && pins(query) {
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
			s.push(entry{kind: kParse, unnamed: name == "", prev: prev})
			return append(out, raw...), nil
		}
		if old := s.stmts[name]; old != nil {
			// PostgreSQL refuses a name in use (42P05): have the server
			// refuse its own name for the statement, reported under the
			// client's.
			out = s.ensure(out, old)
			fresh := newStmt(name, query, params)
			fresh.born = s.p.stmtSeq.Add(1)
			fresh.ops = varOps(query)
			s.push(entry{kind: kParse, action: renameError, errFrom: old.server, errTo: name, fresh: fresh})
			return appendParse(out, old.server, query, params), nil
		}
		st := newStmt(name, query, params)
		st.born = s.p.stmtSeq.Add(1)
		st.ops = varOps(query)
		s.stmts[name] = st
		if s.serverHas(st) {
			if s.notAborted() {
				s.cacheOp("hit")
				s.push(entry{kind: kClose, action: asParseComplete, stmtName: name, created: st})
				return appendClose(out, 'S', dummyClose), nil
			}
			// The transaction may be aborted, where PostgreSQL refuses
			// every Parse (25P02): the server parses the text under a
			// throwaway name and drops it again, so that it decides,
			// and its copy stays untouched either way.
			s.push(entry{kind: kParse, stmtName: name, created: st})
			s.push(entry{kind: kClose, action: swallow})
			out = appendParse(out, dummyClose, query, params)
			return appendClose(out, 'S', dummyClose), nil
		}
		return s.parseOn(out, st, entry{kind: kParse, stmt: st, stmtName: name, created: st}), nil
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
			s.portals[portalName] = portal{sql: st.query, ops: st.ops}
			out = s.ensure(out, st)
			s.push(entry{kind: kBind, stmt: st, unnamed: true, errFrom: st.server})
			return appendMsg(out, 'B', []byte(portalName), nul, []byte(st.server), nul, tail), nil
		}
		if name == "" {
			s.portals[portalName] = portal{sql: s.unnamed, ops: s.unnamedOps}
			out = s.ensureUnnamed(out)
		} else if st != nil {
			s.portals[portalName] = portal{sql: st.query, named: true, ops: st.ops}
		}
		if !s.rename || name == "" || st == nil {
			s.push(entry{kind: kBind})
			return append(out, raw...), nil
		}
		out = s.ensure(out, st)
		// A Bind that does not fit the statement (parameter or format
		// counts) is refused with an error naming it: the client's name.
		s.push(entry{kind: kBind, stmt: st, errFrom: st.server, errTo: name})
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
		if !s.rename || body[0] != 'S' || name == "" || st == nil {
			s.push(entry{kind: kDescribe})
			return append(out, raw...), nil
		}
		out = s.ensure(out, st)
		s.push(entry{kind: kDescribe})
		return appendMsg(out, 'D', []byte{'S'}, []byte(st.server), nul), nil
	case 'E':
		name, _, ok := cstring(body)
		if !ok {
			return out, bad
		}
		pt := s.portals[name]
		s.push(entry{kind: kExecute, sql: pt.sql, named: pt.named, start: now, ops: pt.ops})
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
	s.sst.stmts.Add(st.server, struct{}{})
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
	_, ok := s.sst.stmts.Get(st.server)
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

// noteSQL tracks pinning and statement-cache resets in a simple Query
// (transaction mode, its entry the queue's last) and returns the settings
// it changes. The client's statements a DEALLOCATE ALL or DISCARD ALL
// drops are kept in the entry, to be given back if it does not run.
func (s *session) noteSQL(sql string) (ops []varOp) {
	w := scanWords(sql)
	if w.pin && pinPattern.MatchString(sql) {
		s.pinned = true
	}
	if w.vars {
		ops = splitVarOps(sql)
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

func newStmt(client, query string, params []byte) *stmt {
	return newStmtFor(client, query, params, "")
}

// cancel delivers a cancel request to the server working for the client;
// the server is not released meanwhile.
func (s *session) cancel() {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	s.mu.Lock()
	srv := s.srv
	busy := len(s.queue) > 0
	s.mu.Unlock()
	if srv == nil || !busy {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.p.opts.CancelTimeout)
	defer cancel()
	if err := srv.Cancel(ctx); err != nil {
		s.p.log.Debug("proxy: cancel delivery", "pid", srv.PID, "err", err)
	}
}

// drain closes the client when it is between transactions (Shutdown).
func (s *session) drain() {
	s.mu.Lock()
	idle := len(s.queue) == 0 && s.txStatus == 'I' && !s.waiting
	s.ending = s.ending || idle
	s.mu.Unlock()
	if idle {
		s.client.Conn.Close()
	}
}

// abort cuts the session when the drain's time is up: its client, and
// the read of a server still working for it (a long statement would
// otherwise hold Shutdown until it ends); that server is discarded.
func (s *session) abort() {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	s.client.Conn.Close()
	switch {
	case srv == nil:
	case srv.Raw != nil:
		srv.Raw.Close() // on an event loop: its handler sees the close
	default:
		srv.Net.SetReadDeadline(time.Unix(1, 0))
	}
}

// end stops the server goroutine, gives the server back (reset, released
// or discarded) and reports final to the client.
func (s *session) end(final *clientError) {
	s.mu.Lock()
	s.ending = true
	srv := s.srv
	done := s.done
	clean := len(s.queue) == 0 && s.txStatus == 'I'
	s.mu.Unlock()
	if srv != nil {
		if clean {
			srv.Net.SetReadDeadline(time.Unix(1, 0)) // wakes the goroutine on a message boundary
		} else {
			srv.Net.Close()
		}
	}
	<-done
	s.mu.Lock()
	srv = s.srv
	s.srv = nil
	clean = clean && s.stopClean && len(s.queue) == 0 && s.txStatus == 'I'
	pinned := s.pinned
	s.mu.Unlock()
	s.cmu.Lock() // a cancel under way is delivered before srv serves anyone else
	s.cmu.Unlock()
	if srv != nil {
		pl := srv.Pool()
		if !clean {
			pl.Discard(srv)
		} else {
			srv.Net.SetReadDeadline(time.Time{})
			if s.rename && !pinned {
				pl.Release(srv)
			} else {
				s.checkIn(pl, srv)
			}
		}
	}
	if final != nil {
		// Last words: a client that reads nothing must not hold the session.
		s.client.Conn.SetWriteDeadline(time.Now().Add(time.Second))
		s.cw.Write(appendErrorResponse(nil, "FATAL", final.code, final.msg))
		s.cw.Flush()
	}
	if s.pool != nil {
		s.pool.Leave()
	}
}

// checkIn resets a server leaving a session-mode (or pinned) client and,
// in the same round trip, applies the client's startup settings: the next
// client, which usually sends the same ones (an application reconnecting,
// pgbench -C), then needs no replay before its welcome.
func (s *session) checkIn(pl *pool.Pool, srv *pool.Conn) {
	qs := []string{pl.ResetQuery()}
	if s.startKey != "" {
		qs = append(qs, "RESET ALL;\n"+s.startKey)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, errs, err := srv.ExecBatch(ctx, qs...)
	if err == nil && errs[0] != nil {
		err = errs[0]
	}
	if err != nil || st != 'I' {
		s.p.log.Debug("proxy: reset failed", "pool", pl.Name(), "pid", srv.PID, "err", err)
		pl.Discard(srv)
		return
	}
	sst := newServerState() // the reset dropped settings and statements
	if len(qs) == 2 && errs[1] == nil {
		sst.varsKey = s.startKey
	}
	srv.State = sst
	pl.Release(srv)
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
