package proxy_test

// Cases the first fixes of 2026-12-05 (948c8bf..15e9e3f) got wrong, found
// by a review of that diff; each failed before its fix in the commit that
// adds this file.

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

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/pgwire"
	"github.com/qpkit/qpkit/pkg/pool"
	"github.com/qpkit/qpkit/pkg/proxy"
	"github.com/qpkit/qpkit/pkg/route"
)

// reviewProxy is a transaction-mode proxy that counts OnCacheOp calls.
func reviewProxy(t *testing.T, c *pgtest.Cluster, size int, cacheUnnamed bool) (addr string, ops *sync.Map) {
	t.Helper()
	connect, err := pool.URLConnector(c.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	pools := &route.Pools{Connect: connect, Log: log, Config: func(db, user string) pool.Config {
		return pool.Config{Size: size, AcquireTimeout: 3 * time.Second}
	}}
	ops = &sync.Map{}
	p, err := proxy.New(proxy.Options{
		Mode:  proxy.Transaction,
		Pools: pools,
		Auth: &pgwire.ServerConfig{
			Credentials: func(user, db string) (pgwire.Credential, error) {
				return pgwire.Credential{Method: pgwire.AuthTrust}, nil
			},
			QuickCredentials: func(user, db string) (pgwire.Credential, bool) {
				return pgwire.Credential{Method: pgwire.AuthTrust}, true
			},
		},
		Log:          log,
		CacheUnnamed: cacheUnnamed,
		OnCacheOp: func(op string) {
			v, _ := ops.LoadOrStore(op, new(atomic.Int64))
			v.(*atomic.Int64).Add(1)
		},
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
	return ln.Addr().String(), ops
}

func opCount(ops *sync.Map, op string) int64 {
	v, ok := ops.Load(op)
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

// With --cache-unnamed, "the second time a client parses the same text ...
// Later Parses of that text are answered ... without the server parsing
// (a Close of qpr_none stands in)" (docs/qprouter.md). parseCachedUnnamed
// stamps st.born with a new sequence number at every unnamed Parse, and the
// new check in serverHas (st.born > made) then closes and re-parses the
// server's copy every time: the cache never hits, and each Parse now costs
// a Close plus a Parse.
func TestCachedUnnamedHits(t *testing.T) {
	c := pgtest.Shared(t)
	addr, ops := reviewProxy(t, c, 1, true)
	a := traceDial(t, addr, nil)
	for i := range 8 {
		a.send(t, &pgproto3.Parse{Query: "select $1::int + 1"},
			&pgproto3.Bind{Parameters: [][]byte{[]byte(fmt.Sprint(i))}}, &pgproto3.Execute{}, &pgproto3.Sync{})
		got := a.readyN(t, 1)
		if want := fmt.Sprintf("1 2 D(%d) C(SELECT 1) Z(I) ", i+1); got != want {
			t.Fatalf("run %d: %q, want %q", i, got, want)
		}
	}
	hits, misses := opCount(ops, "hit"), opCount(ops, "miss")
	// Parse 1 is sent as is, Parse 2 is parsed under the name (the one
	// miss), Parses 3 to 8 are the same text on the same server: hits
	// (as are the Binds of 2 to 8): 13 hits, 1 miss.
	if misses != 1 {
		t.Errorf("8 unnamed Parses of one text on one server: %d cache hits, %d misses (server parses); want 13 hits, 1 miss", hits, misses)
	}
}

// Control for the performance promise: pgbench -M prepared style (a named
// Parse once per client, then Bind/Execute/Sync per transaction) must not
// re-parse per transaction. Passes: misses stay bounded by clients x servers.
func TestPreparedNotReparsedPerTransaction(t *testing.T) {
	c := pgtest.Shared(t)
	addr, ops := reviewProxy(t, c, 2, false)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := traceDial(t, addr, nil)
			a.send(t, &pgproto3.Parse{Name: "s1", Query: "select $1::int"}, &pgproto3.Sync{})
			a.readyN(t, 1)
			for j := range 50 {
				a.send(t, &pgproto3.Bind{PreparedStatement: "s1", Parameters: [][]byte{[]byte(fmt.Sprint(i*100 + j))}},
					&pgproto3.Execute{}, &pgproto3.Sync{})
				if got := a.readyN(t, 1); !strings.Contains(got, fmt.Sprintf("D(%d)", i*100+j)) {
					t.Errorf("client %d run %d: %q", i, j, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	if m := opCount(ops, "miss"); m > 4*2+4 {
		t.Errorf("4 clients x 50 transactions of one named statement on 2 servers: %d misses (re-parses)", m)
	}
}

// A statement prepared with SQL-level PREPARE (which pins the client to
// its server) can be bound through the extended protocol, as on
// PostgreSQL. The new refusal of "a name the client has not parsed"
// (plan.go, case 'B' and 'D': st == nil -> qpr_none) only looks at
// protocol-level Parses, so the Bind now fails 26000 where it ran before.
func TestBindOfSQLPrepared(t *testing.T) {
	compareTraces(t, 1, func(t *testing.T, addr string) []string {
		a := traceDial(t, addr, nil)
		var out []string
		out = append(out, a.query(t, "prepare rv_sqlprep as select 7"))
		a.send(t, &pgproto3.Describe{ObjectType: 'S', Name: "rv_sqlprep"}, &pgproto3.Sync{})
		out = append(out, a.readyN(t, 1))
		a.send(t, &pgproto3.Bind{PreparedStatement: "rv_sqlprep"}, &pgproto3.Execute{}, &pgproto3.Sync{})
		out = append(out, a.readyN(t, 1))
		out = append(out, a.query(t, "execute rv_sqlprep"))
		return out
	})
}

// An extended-protocol COPY FROM STDIN (libpq: Parse/Bind/Describe/Execute/
// Sync, data, CopyDone, Sync) whose bad row fails the COPY while the client
// is still sending: PostgreSQL sends ErrorResponse, ignores the rest up to
// the Sync after CopyDone and answers that with ReadyForQuery. Through the
// proxy the ErrorResponse empties the queue (the Syncs were dropped at
// CopyInResponse) so skipToSync sets skipping; the client's CopyData and
// CopyDone are then dropped before the COPY case in plan, clientCopying
// stays true, and the final Sync is forwarded without an entry ('S' case:
// "if s.clientCopying"): the server's ReadyForQuery matches nothing.
func TestExtendedCopyFailsMidStream(t *testing.T) {
	execDirect(t, "drop table if exists rv_copy_ext; create table rv_copy_ext (a int)")
	defer execDirect(t, "drop table if exists rv_copy_ext")
	compareTraces(t, 1, func(t *testing.T, addr string) []string {
		a := traceDial(t, addr, nil)
		var out []string
		a.send(t, &pgproto3.Parse{Query: "copy rv_copy_ext from stdin"}, &pgproto3.Bind{},
			&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
		out = append(out, a.read(t, isMsg[*pgproto3.CopyInResponse]))
		a.send(t, &pgproto3.CopyData{Data: []byte("1\n")})
		time.Sleep(200 * time.Millisecond)
		a.send(t, &pgproto3.CopyData{Data: []byte("not a number\n")})
		out = append(out, a.read(t, isMsg[*pgproto3.ErrorResponse])) // the COPY failed; the client does not know yet
		a.send(t, &pgproto3.CopyData{Data: []byte("2\n")}, &pgproto3.CopyDone{}, &pgproto3.Sync{})
		out = append(out, a.readyN(t, 1))
		out = append(out, a.query(t, "select 42"))
		return out
	})
}

// RESET and DISCARD ALL return a startup setting to the client's startup
// value (state.go restoreStart, noteReported/resetsLast). Startup keys
// are kept as the client spelled them (session.go newSession: JDBC sends
// "DateStyle" and "TimeZone"), while RESET's key and the ParameterStatus
// key are lower-cased: for RESET datestyle, restoreStart(v, start,
// "datestyle") finds nothing and noteReported records the server's
// default as a SET, so the client ends on the server's default instead of
// its startup value (step 2). RESET ALL and DISCARD ALL (steps 5, 8)
// restore every startup key and pass: they are controls.
func TestResetMixedCaseStartupKey(t *testing.T) {
	params := map[string]string{"DateStyle": "SQL, DMY", "TimeZone": "Asia/Tokyo"}
	script := func(t *testing.T, addr string) []string {
		a := traceDial(t, addr, params)
		var out []string
		for _, sql := range []string{
			"set datestyle = 'ISO, MDY'", "reset datestyle", "show datestyle",
			"set timezone = 'UTC'", "reset all", "show timezone",
			"set timezone = 'UTC'", "discard all", "show timezone",
		} {
			out = append(out, a.query(t, sql))
		}
		return out
	}
	compareTracesIn(t, traceModes[1:], 1, script)
}

// DEALLOCATE ALL through the extended protocol (relay.go onServer 'C':
// droppedAll -> clear(s.stmts)) forgets every statement the client has
// when its CommandComplete arrives, also those the client parsed after it
// in the same pipeline, which PostgreSQL keeps (they were parsed after the
// DEALLOCATE ran). Their Bind then fails 26000.
func TestExtendedDeallocateAllThenParse(t *testing.T) {
	compareTraces(t, 1, func(t *testing.T, addr string) []string {
		a := traceDial(t, addr, nil)
		var out []string
		a.send(t, &pgproto3.Parse{Name: "rv_before", Query: "select 4"}, &pgproto3.Sync{})
		out = append(out, a.readyN(t, 1))
		a.send(t, &pgproto3.Parse{Query: "deallocate all"}, &pgproto3.Bind{}, &pgproto3.Execute{},
			&pgproto3.Parse{Name: "rv_after", Query: "select 5"}, &pgproto3.Sync{})
		out = append(out, a.readyN(t, 1))
		a.send(t, &pgproto3.Bind{PreparedStatement: "rv_after"}, &pgproto3.Execute{}, &pgproto3.Sync{})
		out = append(out, a.readyN(t, 1))
		a.send(t, &pgproto3.Bind{PreparedStatement: "rv_before"}, &pgproto3.Execute{}, &pgproto3.Sync{})
		out = append(out, a.readyN(t, 1))
		return out
	})
}
