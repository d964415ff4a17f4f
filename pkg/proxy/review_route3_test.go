// Third review of qprouter's routing: how pkg/proxy uses the route.Router
// seam (Options.Router) in transaction mode. Each test asserts the
// correct behaviour and fails on the code it was written against.

package proxy_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/pgwire"
	"github.com/qpkit/qpkit/pkg/pool"
	"github.com/qpkit/qpkit/pkg/proxy"
	"github.com/qpkit/qpkit/pkg/route"
)

// rvr3RODB is the "replica": a database of the shared cluster whose
// transactions are read-only by default, as on a hot standby.
const rvr3RODB = "zz_route3_ro"

// rvr3RWRouter is the read/write router the Router seam is for: a
// transaction that begins with a SELECT goes to the read-only database's
// pool, any other to the client's own. It records every Request.SQL.
type rvr3RWRouter struct {
	pools *route.Pools
	mu    sync.Mutex
	seen  []string
}

func (r *rvr3RWRouter) Route(ctx context.Context, req route.Request) (*pool.Pool, error) {
	r.mu.Lock()
	r.seen = append(r.seen, req.SQL)
	r.mu.Unlock()
	if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(req.SQL)), "SELECT") {
		req.Database = rvr3RODB
	}
	return r.pools.Route(ctx, req)
}

func (r *rvr3RWRouter) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// rvr3StartRouted starts a transaction-mode proxy on the shared cluster with
// the read/write router.
func rvr3StartRouted(t *testing.T) (*rvr3RWRouter, string) {
	var rt *rvr3RWRouter
	url := rvr3StartWith(t, func(p *route.Pools) route.Router { rt = &rvr3RWRouter{pools: p}; return rt })
	return rt, url
}

func rvr3StartWith(t *testing.T, mk func(*route.Pools) route.Router) string {
	t.Helper()
	c := pgtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	admin, err := pgconn.Connect(ctx, c.URL())
	if err != nil {
		t.Fatal(err)
	}
	admin.Exec(ctx, "CREATE DATABASE "+rvr3RODB).ReadAll() // already there: ignored
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+rvr3RODB+" SET default_transaction_read_only = on").ReadAll(); err != nil {
		t.Fatal(err)
	}
	admin.Close(ctx)
	connect, err := pool.URLConnector(c.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	pools := &route.Pools{Connect: connect, Log: log, Config: func(db, user string) pool.Config {
		return pool.Config{Size: 4, AcquireTimeout: 3 * time.Second}
	}}
	rt := mk(pools)
	p, err := proxy.New(proxy.Options{
		Mode:   proxy.Transaction,
		Pools:  pools,
		Router: rt,
		Auth: &pgwire.ServerConfig{Credentials: func(user, db string) (pgwire.Credential, error) {
			return pgwire.Credential{Method: pgwire.AuthTrust}, nil
		}},
		Log: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p.Shutdown(ctx)
	})
	return fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", ln.Addr())
}

// route.Request documents SQL as "the first statement of the transaction
// when known ("" at connect time and for extended-protocol messages
// without text)". A Parse carries its statement's text, and a Bind of a
// named statement the proxy has recorded (it answers the Parse itself)
// has a known text too, yet the proxy routes every extended-protocol
// transaction with SQL "": session.handle sets sql for 'Q' only. pgx's
// default mode, JDBC, npgsql and psycopg3 all use the extended protocol,
// so a read/write router behind the seam can never see their SELECTs.
func TestRoute3ReviewExtendedProtocolRoutedWithoutSQL(t *testing.T) {
	rt, url := rvr3StartRouted(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, m := range []pgx.QueryExecMode{pgx.QueryExecModeExec, pgx.QueryExecModeCacheStatement} {
		before := len(rt.requests())
		var db string
		if err := conn.QueryRow(ctx, "SELECT current_database()", m).Scan(&db); err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		got := rt.requests()[before:]
		if len(got) == 0 || !strings.Contains(got[0], "current_database()") || db != rvr3RODB {
			t.Errorf("extended protocol (%v): SELECT current_database() routed with Request.SQL %q, served by %q; want the statement's text (its Parse carries it), served by the read-only database %q",
				m, got, db, rvr3RODB)
		}
	}
}
