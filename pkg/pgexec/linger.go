// Lingering: a connection whose statement ignored its cancel keeps its pool slot until the server is done.

package pgexec

import (
	"context"
	"errors"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgxpool"
)

// lingerMax bounds how long a lingering connection waits for its server.
const lingerMax = time.Hour

// lingerSet is the connections of one pool that wait for a server still
// running a canceled statement. Some built-in functions never look for a
// cancel (substring search, array containment; docs/safesql.md): closing
// the socket would free the pool slot while the backend runs on, and an
// agent canceling again and again could keep any number of backends busy.
// Holding the slot keeps the pool's size the bound on busy backends.
type lingerSet struct {
	n       atomic.Int64
	mu      sync.Mutex
	conns   map[*pgxpool.Conn]struct{}
	closing bool
}

// lingerSets holds each pool's set, shared by the executors on it, by a
// weak key: a pool closed without ClosePool and dropped takes its entry
// with it.
var (
	lingerMu   sync.Mutex
	lingerSets = map[weak.Pointer[pgxpool.Pool]]*lingerSet{}
)

func lingerFor(pool *pgxpool.Pool) *lingerSet {
	key := weak.Make(pool)
	lingerMu.Lock()
	defer lingerMu.Unlock()
	ls := lingerSets[key]
	if ls == nil {
		ls = &lingerSet{conns: map[*pgxpool.Conn]struct{}{}}
		lingerSets[key] = ls
		runtime.AddCleanup(pool, func(k weak.Pointer[pgxpool.Pool]) {
			lingerMu.Lock()
			delete(lingerSets, k)
			lingerMu.Unlock()
		}, key)
	}
	return ls
}

// ClosePool closes pool after ending the waits of its lingering
// connections (their sockets are closed at once). pgxpool's Close alone
// would wait for them, up to an hour.
func ClosePool(pool *pgxpool.Pool) {
	lingerMu.Lock()
	ls := lingerSets[weak.Make(pool)]
	delete(lingerSets, weak.Make(pool))
	lingerMu.Unlock()
	if ls != nil {
		ls.mu.Lock()
		ls.closing = true
		for c := range ls.conns {
			_ = c.Conn().PgConn().Conn().Close()
		}
		ls.mu.Unlock()
	}
	pool.Close()
}

// lingers reports whether the call's connection must wait for its server:
// the call was canceled and the server did not answer within cancelGrace
// (the read deadline passed), so the statement may still be running.
func lingers(ioErr error, canceled bool) bool {
	return canceled && ioErr != nil && isTimeout(ioErr)
}

// isTimeout is apart from lingers so that its error target is allocated
// only for an error, not on every call.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// linger reads, in the background, what the server still owes the call
// (the envelope's remaining ReadyForQuery messages, rfq), then closes conn
// and releases it: its pool slot stays taken meanwhile.
func (e *Executor) linger(conn *pgxpool.Conn, rfq int) {
	ls := e.lingering
	ls.mu.Lock()
	if ls.closing {
		ls.mu.Unlock()
		e.release(conn, false)
		return
	}
	ls.conns[conn] = struct{}{}
	ls.n.Add(1)
	ls.mu.Unlock()
	e.destroyed.Add(1)
	go func() {
		pc := conn.Conn().PgConn()
		_ = pc.Conn().SetDeadline(time.Now().Add(lingerMax))
		for rfq > 0 {
			msg, err := pc.ReceiveMessage(context.Background())
			if err != nil {
				break
			}
			if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
				rfq--
			}
		}
		ls.mu.Lock()
		delete(ls.conns, conn)
		ls.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
		_ = conn.Conn().Close(ctx)
		cancel()
		conn.Release()
		ls.n.Add(-1)
	}()
}
