// Session: one client's message loop, output buffer, transaction status and running-query cancel.

package duckwire

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/qpkit/qpkit/pkg/admin"
	"github.com/qpkit/qpkit/pkg/pgwire"
)

// flushAt is the output size at which rows are written out mid-result.
const flushAt = 64 << 10

type session struct {
	srv  *Server
	conn net.Conn
	key  pgwire.CancelKey
	fr   *pgwire.Framer
	out  []byte
	duck *duckdb.Conn

	settings *settings
	// startup is the client's startup packet: its settings are what RESET
	// returns to, as in PostgreSQL.
	startup  map[string]string
	tx       byte // 'I', 'T' or 'E'
	block    txBlock
	implicit bool   // a Query of several statements runs them as one block, as PostgreSQL
	schema   string // current_schema(), once asked
	skipSync bool   // an extended-protocol error: ignore messages until Sync

	stmts   map[string]*prepared
	portals map[string]*portal

	info admin.ClientStat // fixed at startup, for /api/clients

	mu        sync.Mutex
	running   context.CancelFunc // set while a query runs on DuckDB
	streaming bool               // set while rows are being sent
	canceled  atomic.Bool        // a cancel request arrived while streaming
}

func newSession(s *Server, cl *pgwire.Client) *session {
	return &session{
		srv: s, conn: cl.Conn, key: cl.Key, tx: 'I',
		fr:       pgwire.NewFramer(cl.Conn, s.cfg.MaxMessage),
		out:      make([]byte, 0, 8<<10),
		settings: newSettings(s.cfg, cl.Startup.Params),
		startup:  cl.Startup.Params,
		stmts:    map[string]*prepared{},
		portals:  map[string]*portal{},
		info: admin.ClientStat{
			ID: strconv.FormatUint(uint64(cl.Key.PID), 10), Pool: "analytics",
			User: cl.Startup.Params["user"], Database: cl.Startup.Params["database"],
			Application: cl.Startup.Params["application_name"], Addr: cl.Conn.RemoteAddr().String(),
			TLS: cl.Startup.TLS, ConnectedAt: time.Now(),
		},
	}
}

// stat is the session for /api/clients: "active" while a query runs or
// its rows are sent, else "idle".
func (ss *session) stat() admin.ClientStat {
	st := ss.info
	ss.mu.Lock()
	st.State = "idle"
	if ss.running != nil || ss.streaming {
		st.State = "active"
	}
	ss.mu.Unlock()
	return st
}

// run serves the session until the client leaves or the server drains.
func (ss *session) run() error {
	defer ss.closeAll()
	var err error
	if ss.duck, err = ss.srv.connect(context.Background()); err != nil {
		pgwire.WriteError(ss.conn, "FATAL", pgwire.CodeInternalError, "cannot open the analytics database")
		return err
	}
	if err := ss.applyTimeZone(ss.settings.get("TimeZone")); err != nil {
		_, msg := sqlState(err)
		pgwire.WriteError(ss.conn, "FATAL", codeInvalidParam, msg)
		return err
	}
	if err := (&pgwire.Client{Conn: ss.conn, Key: ss.key}).Welcome(ss.settings.reported()); err != nil {
		return err
	}
	for {
		typ, body, err := ss.fr.Next()
		if err != nil {
			if ss.srv.isDraining() {
				ss.out = ss.out[:0]
				ss.errorMsg("FATAL", pgwire.CodeAdminShutdown, "terminating connection due to administrator command")
				ss.flush()
				return nil
			}
			var oe *pgwire.OversizeError
			var fe *pgwire.FrameError
			if errors.As(err, &oe) || errors.As(err, &fe) {
				ss.errorMsg("FATAL", pgwire.CodeProtocolViolation, err.Error())
				ss.flush()
			}
			if err == io.EOF {
				return nil
			}
			return err
		}
		if typ == 'X' {
			return nil
		}
		if err := ss.dispatch(typ, body); err != nil {
			return err
		}
		if (typ == 'Q' || typ == 'S') && ss.tx == 'I' && ss.fr.Buffered() == 0 && ss.srv.isDraining() {
			ss.errorMsg("FATAL", pgwire.CodeAdminShutdown, "terminating connection due to administrator command")
			ss.flush()
			return nil
		}
	}
}

// dispatch handles one message; an error ends the session.
func (ss *session) dispatch(typ byte, body []byte) error {
	if ss.skipSync && typ != 'S' {
		switch typ {
		case 'P', 'B', 'D', 'E', 'C', 'H':
			return nil
		}
	}
	switch typ {
	case 'Q':
		ss.simpleQuery(cstring(body))
		ss.ready()
		return ss.flush()
	case 'P':
		ss.parse(body)
	case 'B':
		ss.bind(body)
	case 'D':
		ss.describe(body)
	case 'E':
		ss.execute(body)
	case 'C':
		ss.closeMsg(body)
	case 'H':
		return ss.flush()
	case 'S':
		ss.sync()
		return ss.flush()
	case 'd', 'c', 'f':
		// CopyData/CopyDone/CopyFail outside COPY: ignored, as PostgreSQL does.
		return nil
	default:
		ss.errorMsg("FATAL", pgwire.CodeProtocolViolation, fmt.Sprintf("invalid frontend message type %d", typ))
		ss.flush()
		return fmt.Errorf("invalid message type %d", typ)
	}
	if len(ss.out) >= flushAt {
		return ss.flush()
	}
	return nil
}

func (ss *session) flush() error {
	if len(ss.out) == 0 {
		return nil
	}
	_, err := ss.conn.Write(ss.out)
	ss.out = ss.out[:0]
	if err != nil {
		return fmt.Errorf("write to client: %w", err)
	}
	return nil
}

// ready appends ReadyForQuery with the transaction status.
func (ss *session) ready() {
	ss.out = append(ss.out, 'Z', 0, 0, 0, 5, ss.tx)
}

// failed records a statement error in the transaction status: an explicit
// transaction block becomes aborted.
func (ss *session) failed() {
	if ss.tx == 'T' {
		ss.tx = 'E'
	}
}

// wake makes a session blocked reading notice the drain.
func (ss *session) wake() { ss.conn.SetReadDeadline(time.Unix(1, 0)) }

// startQuery returns the context of a query about to run; end must be called.
func (ss *session) startQuery() (ctx context.Context, end func()) {
	ctx, cancel := context.WithCancel(ss.srv.queryCtx)
	if ms := ss.settings.statementTimeout(); ms > 0 {
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeoutCause(ctx, time.Duration(ms)*time.Millisecond, errStatementTimeout)
		c1 := cancel
		cancel = func() { c2(); c1() }
	}
	ss.mu.Lock()
	ss.running = cancel
	ss.mu.Unlock()
	return ctx, func() {
		ss.mu.Lock()
		ss.running = nil
		ss.mu.Unlock()
		cancel()
	}
}

// cancelRunning interrupts the DuckDB query, or stops the rows being
// sent; a cancel request for an idle session does nothing, as in
// PostgreSQL.
func (ss *session) cancelRunning() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.running != nil {
		ss.running()
	}
	if ss.streaming {
		ss.canceled.Store(true)
	}
}

func (ss *session) setStreaming(on bool) {
	ss.mu.Lock()
	ss.streaming = on
	ss.mu.Unlock()
	if !on {
		ss.canceled.Store(false)
	}
}

func (ss *session) closeAll() {
	for name := range ss.portals {
		ss.dropPortal(name)
	}
	for name, st := range ss.stmts {
		st.close()
		delete(ss.stmts, name)
	}
	if ss.duck != nil {
		ss.duck.Close()
	}
}

// Message writers: append-style, into ss.out.

func (ss *session) begin(typ byte) int {
	ss.out = append(ss.out, typ, 0, 0, 0, 0)
	return len(ss.out) - 4
}

func (ss *session) end(at int) {
	binary.BigEndian.PutUint32(ss.out[at:], uint32(len(ss.out)-at))
}

func (ss *session) commandComplete(tag string) {
	at := ss.begin('C')
	ss.out = append(ss.out, tag...)
	ss.out = append(ss.out, 0)
	ss.end(at)
}

func (ss *session) emptyQuery() { ss.out = append(ss.out, 'I', 0, 0, 0, 4) }

func (ss *session) noData() { ss.out = append(ss.out, 'n', 0, 0, 0, 4) }

func (ss *session) parameterStatus(name, value string) {
	at := ss.begin('S')
	ss.out = append(ss.out, name...)
	ss.out = append(ss.out, 0)
	ss.out = append(ss.out, value...)
	ss.out = append(ss.out, 0)
	ss.end(at)
}

// errorMsg appends an ErrorResponse.
func (ss *session) errorMsg(severity, code, msg string) { ss.report('E', severity, code, msg) }

// notice appends a NoticeResponse (a WARNING, as PostgreSQL sends them).
func (ss *session) notice(severity, code, msg string) { ss.report('N', severity, code, msg) }

func (ss *session) report(typ byte, severity, code, msg string) {
	at := ss.begin(typ)
	for _, f := range [...]struct {
		k byte
		v string
	}{{'S', severity}, {'V', severity}, {'C', code}, {'M', msg}} {
		ss.out = append(ss.out, f.k)
		ss.out = append(ss.out, f.v...)
		ss.out = append(ss.out, 0)
	}
	ss.out = append(ss.out, 0)
	ss.end(at)
}

// sendError reports err as an ERROR with its SQLSTATE.
func (ss *session) sendError(err error) {
	code, msg := sqlState(err)
	ss.srv.cfg.Log.Debug("statement failed", "session", ss.info.ID, "sqlstate", code, "err", msg)
	ss.errorMsg("ERROR", code, msg)
	ss.failed()
}

func cstring(b []byte) string {
	if n := len(b); n > 0 && b[n-1] == 0 {
		b = b[:n-1]
	}
	return string(b)
}
