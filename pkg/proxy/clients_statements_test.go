package proxy_test

import (
	"fmt"
	"net"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// clientsStep is one write by client c of a multi-client script.
type clientsStep struct {
	c  int
	st diffStep // st.ready < 0 (a Flush): read -st.ready messages
}

type clientsConn struct {
	conn net.Conn
	fe   *pgproto3.Frontend
}

func clientsLogin(t *testing.T, addr string) *clientsConn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fe := pgproto3.NewFrontend(conn, conn)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": "postgres", "database": "postgres"}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := transcript(conn, fe, 1); err != nil {
		t.Fatalf("login: %v", err)
	}
	return &clientsConn{conn, fe}
}

// runClients runs the steps of clients clients at addr, one after the other,
// and returns every step's answers.
func runClients(t *testing.T, addr string, clients int, steps []clientsStep) [][]string {
	t.Helper()
	cs := make([]*clientsConn, clients)
	for i := range cs {
		cs[i] = clientsLogin(t, addr)
	}
	var out [][]string
	for i, s := range steps {
		c := cs[s.c]
		if _, err := c.conn.Write(s.st.in); err != nil {
			out = append(out, []string{"write error: " + err.Error()})
			return out
		}
		var got []string
		var err error
		if s.st.ready < 0 {
			got, err = readMessages(c.conn, c.fe, -s.st.ready)
		} else {
			got, err = transcript(c.conn, c.fe, s.st.ready)
		}
		if err != nil {
			got = append(got, fmt.Sprintf("transcript error at step %d: %v", i, err))
			out = append(out, got)
			return out
		}
		out = append(out, got)
	}
	return out
}

// readMessages reads n messages (after a Flush), as transcript writes them.
func readMessages(conn net.Conn, fe *pgproto3.Frontend, n int) ([]string, error) {
	var out []string
	for range n {
		conn.SetDeadline(time.Now().Add(3 * time.Second))
		m, err := fe.Receive()
		if err != nil {
			return out, err
		}
		out = append(out, fmt.Sprintf("%T %+v", m, m))
	}
	return out, nil
}

type clientsSetup struct {
	name string
	cfg  cfg
}

var clientsSetups = []clientsSetup{
	{"one server", cfg{mode: proxy.Transaction, size: 1}},
	{"one server lru2", cfg{mode: proxy.Transaction, size: 1, lru: 2}},
	{"two servers lru2", cfg{mode: proxy.Transaction, size: 2, lru: 2}},
	{"loop one server lru2", cfg{mode: proxy.Transaction, size: 1, lru: 2, loop: true}},
	{"loop cache-unnamed one server", cfg{mode: proxy.Transaction, size: 1, lru: 2, loop: true, cacheUnnamed: true}},
}

// compareClients runs steps directly and through the proxy in every setup.
func compareClients(t *testing.T, clients int, steps []clientsStep, setups ...clientsSetup) {
	t.Helper()
	c := pgtest.Shared(t)
	want := runClients(t, fmt.Sprintf("127.0.0.1:%d", c.Port), clients, steps)
	if len(setups) == 0 {
		setups = clientsSetups
	}
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			r := startProxy(t, c, s.cfg)
			got := runClients(t, r.addr, clients, steps)
			diffs := 0
			for k := range max(len(got), len(want)) {
				var g, w []string
				if k < len(got) {
					g = got[k]
				}
				if k < len(want) {
					w = want[k]
				}
				if !slices.Equal(g, w) && diffs < 3 {
					diffs++
					t.Errorf("step %d (client %d): %s\nthrough the proxy:\n  %s\ndirect:\n  %s", k, steps[k].c, steps[k].st.desc,
						strings.Join(g, "\n  "), strings.Join(w, "\n  "))
				}
			}
		})
	}
}

func (b *stepBuilder) H() *stepBuilder { return b.add(&pgproto3.Flush{}, "H") }

// flushStep is a group ended by Flush: read answers until n messages came.
func (b *stepBuilder) Hn(n int) diffStep {
	b.add(&pgproto3.Flush{}, "H")
	return diffStep{desc: strings.Join(b.desc, " "), in: b.in, ready: -n}
}

func TestPortalAfterEviction(t *testing.T) {
	compareClients(t, 1, []clientsStep{
		{0, ext().P("a", "select 1").P("b", "select 2").B("", "a").E("").B("", "b").E("").S()},
		{0, ext().B("pa", "a").P("c", "select 3").B("", "c").E("").E("pa").S()},
	})
}

func execShared(t *testing.T, sqls ...string) {
	t.Helper()
	c := pgtest.Shared(t)
	admin := connect(t, c.URL())
	for _, sql := range sqls {
		if _, err := admin.Exec(t.Context(), sql); err != nil {
			t.Fatal(err)
		}
	}
}

// Two clients with different search_path prepare the same text under a
// name: each must read its own table, as on PostgreSQL.
func TestNamedStatementPerSearchPath(t *testing.T) {
	execShared(t,
		"drop schema if exists cs_a, cs_b cascade",
		"create schema cs_a", "create schema cs_b",
		"create table cs_a.t (x int)", "insert into cs_a.t values (1)",
		"create table cs_b.t (x text, y text)", "insert into cs_b.t values ('b', 'y')")
	compareClients(t, 2, []clientsStep{
		{0, query("set search_path = cs_a")},
		{1, query("set search_path = cs_b")},
		{0, ext().P("s", "select * from t").B("", "s").E("").S()},
		{1, ext().P("s", "select * from t").B("", "s").E("").S()},
		{0, ext().B("", "s").E("").S()},
		{1, ext().B("", "s").E("").S()},
	}, clientsSetups[0])
}

// A Parse of a text that no longer parses (its table dropped) fails at
// the Parse on PostgreSQL even when a server already has that text.
func TestParseAfterDrop(t *testing.T) {
	execShared(t, "create table if not exists cs_drop (x int)")
	compareClients(t, 2, []clientsStep{
		{1, query("drop table if exists cs_drop; create table cs_drop (x int); insert into cs_drop values (1)")},
		{0, ext().P("s", "select * from cs_drop").B("", "s").E("").S()},
		{1, query("drop table cs_drop")},
		{1, ext().P("s", "select * from cs_drop").B("", "s").E("").S()},
		{1, ext().B("", "s").E("").S()},
		{1, ext().P("s", "select 1").B("", "s").E("").S()},
		{1, query("create table cs_drop (x int)")}, // for the next run
	}, clientsSetups[0])
}

// Two clients with different TimeZone prepare the same text under a name:
// PostgreSQL reads the literal in each client's own zone at Parse.
func TestNamedStatementPerTimeZone(t *testing.T) {
	compareClients(t, 2, []clientsStep{
		{0, query("set timezone = 'UTC'")},
		{1, query("set timezone = 'Asia/Tokyo'")},
		{0, ext().P("s", "select '2024-01-01 00:00'::timestamptz").B("", "s").E("").S()},
		{1, ext().P("s", "select '2024-01-01 00:00'::timestamptz").B("", "s").E("").S()},
	}, clientsSetups[0], clientsSetups[2])
}

func TestFlushPipelines(t *testing.T) {
	compareClients(t, 2, []clientsStep{
		{0, ext().P("a", "select generate_series(1,3)").Hn(1)},
		{1, ext().P("b", "select 2").B("", "b").E("").S()},
		{0, ext().D('S', "a").Hn(2)},
		{0, ext().B("p", "a").add(&pgproto3.Execute{Portal: "p", MaxRows: 1}, "E(p,1)").Hn(3)},
		{0, ext().D('P', "p").add(&pgproto3.Execute{Portal: "p", MaxRows: 1}, "E(p,1)").Hn(3)},
		{0, ext().C('P', "p").E("p").S()},
		{1, ext().B("", "b").E("").S()},
		{0, ext().C('S', "a").Hn(1)},
		{0, ext().P("a", "select 9").B("", "a").E("").S()},
		{0, ext().B("", "a").E("").C('S', "a").P("a", "select 10").Hn(5)},
		{0, ext().B("", "a").E("").S()},
		{1, ext().P("", "selec").Hn(1)},
		{1, ext().B("", "b").E("").S()},
	})
}

// A DEALLOCATE ALL or DISCARD ALL one client runs through the extended
// protocol (as JDBC runs every statement) drops only its own statements
// on PostgreSQL; another client's prepared statement keeps working.
func TestExtendedDeallocateAllOtherClient(t *testing.T) {
	for _, sql := range []string{"deallocate all", "discard all"} {
		t.Run(sql, func(t *testing.T) {
			compareClients(t, 2, []clientsStep{
				{0, ext().P("s", "select 'mine'").B("", "s").E("").S()},
				{1, ext().P("", sql).B("", "").E("").S()},
				{0, ext().B("", "s").E("").S()},
				{0, ext().B("", "s").E("").S()}, // and from then on
			}, clientsSetups[0], clientsSetups[3])
		})
	}
}

// The same client: after its own DEALLOCATE ALL through the extended
// protocol its statements are gone, on every server.
func TestExtendedDeallocateAllSameClient(t *testing.T) {
	compareClients(t, 2, []clientsStep{
		{1, ext().P("t", "select 'warm'").B("", "t").E("").S()},
		{0, ext().P("s", "select 'mine'").B("", "s").E("").S()},
		{0, ext().P("", "deallocate all").B("", "").E("").S()},
		{0, ext().B("", "s").E("").S()},
	}, clientsSetups[0])
}

// A client that names a statement it never prepared gets 26000 from
// PostgreSQL, also when the name is one the server has for another
// client's statement (read here from pg_prepared_statements).
func TestBindOfAnotherClientsServerName(t *testing.T) {
	c := pgtest.Shared(t)
	for _, loop := range []bool{false, true} {
		t.Run(fmt.Sprintf("loop=%v", loop), func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1, loop: loop})
			a := clientsLogin(t, r.addr)
			st := ext().P("s", "select 'of a'").B("", "s").E("").S()
			a.conn.Write(st.in)
			if got, err := transcript(a.conn, a.fe, st.ready); err != nil || !strings.Contains(strings.Join(got, " "), "DataRow") {
				t.Fatalf("a's own statement: %q, %v", got, err)
			}
			b := dialRaw(t, r.addr)
			names := b.query(t, "select name from pg_prepared_statements where statement = 'select ''of a'''")
			if len(names) != 1 || !strings.HasPrefix(names[0], "qpr_") {
				t.Fatalf("the server's name for a's statement: %q", names)
			}
			bc := clientsLogin(t, r.addr)
			for _, st := range []diffStep{ext().D('S', names[0]).S(), ext().B("", names[0]).E("").S()} {
				bc.conn.Write(st.in)
				got, err := transcript(bc.conn, bc.fe, st.ready)
				if all := strings.Join(got, " "); err != nil || !strings.Contains(all, "26000") || strings.Contains(all, "DataRow") {
					t.Errorf("%s by another client: %q, %v; want 26000 and no row", st.desc, got, err)
				}
			}
		})
	}
}

// heapGrowth runs steps (each a batch of groups) on a fresh proxy and
// returns how much the live heap grew, the client still connected.
func heapGrowth(t *testing.T, steps []diffStep) int64 {
	t.Helper()
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1, lru: 4})
	cl := clientsLogin(t, r.addr)
	// warm up: the first step alone
	if _, err := cl.conn.Write(steps[0].in); err != nil {
		t.Fatal(err)
	}
	if _, err := transcript(cl.conn, cl.fe, steps[0].ready); err != nil {
		t.Fatal(err)
	}
	heap := func() int64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	var before int64
	for i, st := range steps[1:] {
		if i == 10 {
			before = heap() // after ten batches: what a session settles at
		}
		if _, err := cl.conn.Write(st.in); err != nil {
			t.Fatal(err)
		}
		if _, err := transcript(cl.conn, cl.fe, st.ready); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	grown := heap() - before
	runtime.KeepAlive(steps)
	return grown
}

// Portals end with their transaction on PostgreSQL; a client that names
// each transaction's portal anew (JDBC's C_1, C_2, ... for cursors) must
// not make the proxy's memory grow without bound.
func TestPortalNamesGrowMemory(t *testing.T) {
	const batches, per = 100, 500
	build := func(unique bool) []diffStep {
		var steps []diffStep
		pre := ext().P("s", "select 1").B("", "s").E("").S()
		steps = append(steps, pre)
		k := 0
		for range batches {
			var b diffStep
			for range per {
				name := "p"
				if unique {
					name = fmt.Sprintf("C_%d", k)
				}
				k++
				b = pipeline(b, ext().B(name, "s").E(name).S())
			}
			steps = append(steps, b)
		}
		return steps
	}
	same := heapGrowth(t, build(false))
	uniq := heapGrowth(t, build(true))
	t.Logf("heap growth: one portal name %d bytes, %d distinct names %d bytes", same, batches*per, uniq)
	if uniq-same > 2<<20 {
		t.Fatalf("the proxy keeps %d bytes per portal name after its transaction ended", (uniq-same)/((batches-10)*per))
	}
}

// A named Parse that fails leaves nothing on PostgreSQL; the proxy must
// not keep a per-server entry for every failed text.
func TestFailedParsesGrowMemory(t *testing.T) {
	const batches, per = 100, 500
	build := func(fail bool) []diffStep {
		var steps []diffStep
		steps = append(steps, ext().P("w", "select 1").B("", "w").E("").S())
		k := 0
		for range batches {
			var b diffStep
			for range per {
				text := fmt.Sprintf("select %d", k)
				if fail {
					text = fmt.Sprintf("selec %d", k)
				}
				name := fmt.Sprintf("n%d", k)
				k++
				b = pipeline(b, ext().P(name, text).B("", name).E("").C('S', name).S())
			}
			steps = append(steps, b)
		}
		return steps
	}
	ok := heapGrowth(t, build(false))
	failed := heapGrowth(t, build(true))
	t.Logf("heap growth: %d parses that succeed %d bytes, that fail %d bytes", batches*per, ok, failed)
	if failed-ok > 2<<20 {
		t.Fatalf("the proxy keeps %d bytes per failed Parse", (failed-ok)/((batches-10)*per))
	}
}

// A client that prepares a statement after ALTER TABLE gets the new row
// type from PostgreSQL, never 0A000: its Parse analyses the text anew.
func TestParseAfterAlterTable(t *testing.T) {
	execShared(t, "create table if not exists cs_alter (x int)")
	compareClients(t, 2, []clientsStep{
		{1, query("drop table if exists cs_alter; create table cs_alter (x int); insert into cs_alter values (1)")},
		{0, ext().P("s", "select * from cs_alter").B("", "s").E("").S()},
		{1, query("alter table cs_alter add column y text")},
		{1, ext().P("s", "select * from cs_alter").B("", "s").E("").S()},
	}, clientsSetups[0], clientsSetups[3])
}

// Pipelines that reuse names across Close, failures and evictions.
func TestPipelinesReuseNames(t *testing.T) {
	compareClients(t, 2, []clientsStep{
		{0, pipeline(
			ext().P("a", "select 1").B("", "a").E("").S(),
			ext().C('S', "a").P("a", "select 2").B("", "a").E("").S(),
			ext().C('S', "a").P("a", "selec 3").S(),
			ext().B("", "a").E("").S(),
			ext().P("a", "select 4").B("", "a").E("").S(),
		)},
		{1, ext().P("b", "select 5").P("c", "select 6").P("d", "select 7").B("", "b").E("").S()},
		{0, pipeline(
			ext().B("", "a").E("").C('S', "a").S(),
			ext().P("a", "select 1").D('S', "a").S(),
			ext().B("", "a").E("").B("", "missing").P("a", "select 9").S(),
			ext().B("", "a").E("").S(),
		)},
		{0, pipeline(
			ext().P("", "select 10").B("p", "").D('P', "p").C('P', "p").E("p").S(),
			ext().B("p", "a").E("p").C('S', "a").E("p").S(),
			ext().B("", "a").S(),
		)},
		{1, ext().P("x", "select 11").B("", "x").E("").H().C('S', "x").P("x", "select 12").B("", "x").E("").S()},
		{0, ext().P("a", "select 13").B("", "a").E("").S()},
	})
}
