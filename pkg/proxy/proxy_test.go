package proxy_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/netloop"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/pgwire"
	"github.com/qpkit/qpkit/pkg/pool"
	"github.com/qpkit/qpkit/pkg/proxy"
	"github.com/qpkit/qpkit/pkg/rawconn"
	"github.com/qpkit/qpkit/pkg/route"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func eventLoop() bool { return os.Getenv("QPROUTER_EVENT_LOOP") == "1" }

// running is a proxy serving on a local port for one test.
type running struct {
	*proxy.Proxy
	addr   string
	pools  *route.Pools
	events chan proxy.QueryEvent
	// replays counts the settings replays (OnReplay).
	replays atomic.Int64
}

// url is a connection string through the proxy.
func (r *running) url(db string) string {
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable", r.addr, db)
}

type cfg struct {
	mode       proxy.Mode
	size       int
	timeout    time.Duration
	events     bool
	onQuery    func(proxy.QueryEvent) // instead of events
	lru        int
	maxClients int
	loop       bool                         // serve on an event loop (also when QPROUTER_EVENT_LOOP=1)
	users      map[string]pgwire.Credential // nil: trust everyone
	lookedUp   map[string]pgwire.Credential // users only Credentials knows, as through an auth query
	startup    time.Duration                // the startup timeout (pgwire's default when 0)
	// cacheUnnamed: Options.CacheUnnamed (also when QPROUTER_CACHE_UNNAMED=1)
	cacheUnnamed bool
	modeFor      func(database, user string) proxy.Mode // Options.ModeFor
	logTo        slog.Handler                           // the proxy's log (stderr at level error when nil)
}

func startProxy(t testing.TB, c *pgtest.Cluster, o cfg) *running {
	t.Helper()
	connect, err := pool.URLConnector(c.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	level := slog.LevelError
	if os.Getenv("QPROUTER_DEBUG") != "" {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if o.logTo != nil {
		log = slog.New(o.logTo)
	}
	pools := &route.Pools{Connect: connect, Log: log, Config: func(db, user string) pool.Config {
		return pool.Config{Size: o.size, AcquireTimeout: o.timeout}
	}}
	r := &running{pools: pools}
	opts := proxy.Options{
		Mode:    o.mode,
		ModeFor: o.modeFor,
		Pools:   pools,
		Auth: &pgwire.ServerConfig{Credentials: func(user, db string) (pgwire.Credential, error) {
			if o.users == nil {
				return pgwire.Credential{Method: pgwire.AuthTrust}, nil
			}
			if c, ok := o.users[user]; ok {
				return c, nil
			}
			if c, ok := o.lookedUp[user]; ok {
				return c, nil
			}
			return pgwire.Credential{}, pgwire.ErrUnknownUser
		}, QuickCredentials: func(user, db string) (pgwire.Credential, bool) {
			if o.users == nil {
				return pgwire.Credential{Method: pgwire.AuthTrust}, true
			}
			c, ok := o.users[user]
			return c, ok
		}, StartupTimeout: o.startup},
		Log:               log,
		PreparedPerServer: o.lru,
		MaxClients:        o.maxClients,
		CacheUnnamed:      o.cacheUnnamed || os.Getenv("QPROUTER_CACHE_UNNAMED") == "1",
		OnReplay:          func() { r.replays.Add(1) },
	}
	if o.events {
		r.events = make(chan proxy.QueryEvent, 10000)
		opts.OnQuery = func(e proxy.QueryEvent) {
			select {
			case r.events <- e:
			default:
			}
		}
	}
	if o.onQuery != nil {
		opts.OnQuery = o.onQuery
	}
	if o.mode == proxy.Transaction && (o.loop || eventLoop()) {
		// QPROUTER_EVENT_LOOP=1 runs every transaction-mode test on the
		// event loop (scripts/test runs the package both ways).
		// Two loops, so that servers also move between loops.
		var loops []*netloop.Loop
		for range 2 {
			// QPROUTER_IO_URING=1: every write through the ring.
			loop, err := netloop.NewWith(netloop.Options{IOURing: os.Getenv("QPROUTER_IO_URING") == "1", RingBatch: 1})
			if err != nil {
				t.Fatal(err)
			}
			loops = append(loops, loop)
			t.Cleanup(loop.Close) // after Shutdown (cleanups run last first)
		}
		opts.Loops = loops
		pools.Adopt = netloop.Adopter(loops...)
	}
	p, err := proxy.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Loops != nil {
		ln = rawconn.Listen(ln, false) // accepted, authenticated and welcomed on the loop
	}
	r.Proxy = p
	r.addr = ln.Addr().String()
	go p.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := p.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return r
}

func connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func pgxConnect(ctx context.Context, url string) (*pgx.Conn, error) { return pgx.Connect(ctx, url) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }

var modes = []proxy.Mode{proxy.Session, proxy.Transaction}

// queryAll runs sql in every exec mode and returns the rows as text.
func queryText(t testing.TB, conn *pgx.Conn, mode pgx.QueryExecMode, sql string, args ...any) string {
	t.Helper()
	rows, err := conn.Query(context.Background(), sql, append([]any{mode}, args...)...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var b strings.Builder
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, vals...)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return b.String()
}

var execModes = []pgx.QueryExecMode{
	pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
	pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol,
}

func TestSameAnswersAsDirect(t *testing.T) {
	c := pgtest.Shared(t)
	direct := connect(t, c.URL())
	queries := []struct {
		sql  string
		args []any
	}{
		{"select g, g*2, 'x'||g from generate_series(1, 500) g where g > $1", []any{10}},
		{"select $1::text, $2::int", []any{"hello", 42}},
		{"select oid, relname from pg_class where relname like $1 order by 1", []any{"pg_%"}},
		{"select null::int, ''::text, 1.5::numeric", nil},
	}
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m, size: 2})
			conn := connect(t, r.url("postgres"))
			for _, em := range execModes {
				for _, q := range queries {
					want := queryText(t, direct, em, q.sql, q.args...)
					got := queryText(t, conn, em, q.sql, q.args...)
					if got != want {
						t.Errorf("%v %s: got %q, want %q", em, q.sql, got, want)
					}
				}
			}
			// An error mid-session leaves the session usable.
			if _, err := conn.Exec(context.Background(), "select 1/0"); err == nil || !strings.Contains(err.Error(), "22012") {
				t.Errorf("division by zero: %v", err)
			}
			if got := queryText(t, conn, pgx.QueryExecModeCacheStatement, "select 1"); got != "1\n" {
				t.Errorf("after error: %q", got)
			}
		})
	}
}

// Many clients share few server connections with prepared statements.
func TestTransactionModePrepared(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 3})
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn := connect(t, r.url("postgres"))
			ctx := context.Background()
			for j := range 50 {
				var n int
				q := fmt.Sprintf("select $1::int + %d", j%7)
				if err := conn.QueryRow(ctx, q, i).Scan(&n); err != nil {
					errs <- err
					return
				}
				if n != i+j%7 {
					errs <- fmt.Errorf("got %d want %d", n, i+j%7)
					return
				}
				if j%10 == 0 {
					if err := conn.DeallocateAll(ctx); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
