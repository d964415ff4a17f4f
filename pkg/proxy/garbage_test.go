package proxy_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// Well-framed messages with hostile bodies (Bind without its counts,
// Parse of a statement that is not there, CopyData outside a COPY, a
// client that leaves mid-COPY or holding a lock) reach the proxy's own
// parsing and its clean-up, which garbage that fails at the frame
// (TestGarbageClients) never does. After each such client: no panic was
// logged, and the next client gets a clean server (the pool has one).

// framed turns bytes into frontend messages with correct lengths:
// repeatedly a type byte, a body length byte, then that many body bytes.
func framed(data []byte) []byte {
	var out []byte
	for len(data) >= 2 {
		typ, n := data[0], int(data[1])
		data = data[2:]
		n = min(n, len(data))
		out = append(out, typ)
		out = binary.BigEndian.AppendUint32(out, uint32(n+4))
		out = append(out, data[:n]...)
		data = data[n:]
	}
	return out
}

// msg is one message in framed's input form.
func msg(typ byte, parts ...string) []byte {
	body := strings.Join(parts, "")
	if len(body) > 255 {
		panic("message body over 255 bytes")
	}
	return append([]byte{typ, byte(len(body))}, body...)
}

// garbageSeeds are valid or nearly valid exchanges for the fuzzer to bend.
func garbageSeeds() [][]byte {
	cat := func(ms ...[]byte) []byte { return bytes.Join(ms, nil) }
	bind := "\x00s1\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x0142\x00\x00"
	return [][]byte{
		cat(msg('P', "s1\x00select $1::int\x00\x00\x00"), msg('B', bind), msg('D', "P\x00"), msg('E', "\x00\x00\x00\x00\x00"), msg('S')),
		cat(msg('P', "\x00select 1\x00\x00\x00"), msg('B', "\x00\x00\x00\x00\x00\x00\x00\x00"), msg('E', "\x00\x00\x00\x00\x00"), msg('H')),
		cat(msg('B', "\x00missing\x00\x00\x00\x00\x00\x00\x00"), msg('E', "\x00\x00\x00\x00\x00"), msg('S')),
		cat(msg('D', "Smissing\x00"), msg('C', "Smissing\x00"), msg('C', "Pp\x00"), msg('S')),
		cat(msg('Q', "begin; set local work_mem = '1MB'; set statement_timeout = 1234\x00")),
		cat(msg('Q', "select set_config('search_path', 'x', false)\x00")),
		cat(msg('Q', "select pg_advisory_lock(77)\x00")),
		cat(msg('Q', "create temp table g(a int)\x00"), msg('Q', "copy g from stdin\x00"), msg('d', "1\n2\n")),
		cat(msg('Q', "copy (select 1) to stdout\x00"), msg('d', "x"), msg('c')),
		cat(msg('Q', "begin\x00"), msg('Q', "select 1/0\x00"), msg('Q', "select 1\x00")),
		cat(msg('Q', "listen chan\x00"), msg('Q', "declare c cursor with hold for select 1\x00")),
		cat(msg('F', "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), msg('f', "no\x00"), msg('p', "pw\x00")),
		// fastpath pg_advisory_lock(77) and set_config('statement_timeout', '1234', false)
		cat(msg('F', "\x00\x00\x0b\x40\x00\x01\x00\x01\x00\x01\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00\x4d\x00\x00")),
		cat(msg('F', "\x00\x00\x08\x1e\x00\x00\x00\x03\x00\x00\x00\x11statement_timeout\x00\x00\x00\x041234\x00\x00\x00\x05false\x00\x00")),
		cat(msg('Q', "deallocate all\x00"), msg('Q', "prepare q as select 1\x00"), msg('Q', "execute q\x00")),
		cat(msg('X'), msg('Q', "select 1\x00")),
		cat(msg('P', "\x00set search_path to z\x00\x00\x00"), msg('B', "\x00\x00\x00\x00\x00\x00\x00\x00"), msg('E', "\x00\x00\x00\x00\x00"), msg('S')),
		cat(msg('P', "sp\x00select set_config('statement_timeout', '77', false)\x00\x00\x00"),
			msg('B', "\x00sp\x00\x00\x00\x00\x00\x00\x00"), msg('E', "\x00\x00\x00\x00\x00"), msg('S')),
	}
}

// panicLog keeps the proxy's log messages that report a panic.
type panicLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *panicLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *panicLog) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "panic") {
		var b strings.Builder
		b.WriteString(r.Message)
		r.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&b, " %s=%v", a.Key, a.Value); return true })
		l.mu.Lock()
		l.msgs = append(l.msgs, b.String())
		l.mu.Unlock()
	}
	return nil
}
func (l *panicLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *panicLog) WithGroup(string) slog.Handler      { return l }
func (l *panicLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.msgs
	l.msgs = nil
	return m
}

// garbageTarget is a proxy with a one-server pool and a log of panics.
type garbageTarget struct {
	r    *running
	logs *panicLog
}

func newGarbageTarget(t testing.TB, mode proxy.Mode, loop bool) *garbageTarget {
	logs := &panicLog{}
	r := startProxy(t, pgtest.Shared(t), cfg{mode: mode, size: 1, timeout: 10 * time.Second, loop: loop, logTo: logs})
	return &garbageTarget{r: r, logs: logs}
}

// hostile logs in, sends the framed messages and a Sync, reads what comes
// back for a while and leaves without a Terminate.
func (g *garbageTarget) hostile(t testing.TB, data []byte) {
	c := dialRaw(t, g.r.addr)
	defer c.conn.Close()
	conn, fe := c.conn, c.fe
	out := append(framed(data), 'S', 0, 0, 0, 4)
	end := time.Now().Add(300 * time.Millisecond)
	conn.SetDeadline(end)
	if _, err := conn.Write(out); err != nil {
		return // closed on us: fine
	}
	// Until the proxy closes, or is quiet for a moment after a
	// ReadyForQuery (the one for the final Sync, most of the time).
	for {
		m, err := fe.Receive()
		if err != nil {
			return
		}
		if _, ok := m.(*pgproto3.ReadyForQuery); ok {
			if quiet := time.Now().Add(20 * time.Millisecond); quiet.Before(end) {
				conn.SetDeadline(quiet)
			}
		}
	}
}

// check fails unless a new client gets a clean server: no transaction,
// no COPY, none of the hostile client's settings or locks.
func (g *garbageTarget) check(t testing.TB, what string) {
	if m := g.logs.take(); len(m) > 0 {
		t.Fatalf("%s: the proxy panicked: %s", what, strings.Join(m, "; "))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, g.r.url("postgres"))
	if err != nil {
		t.Fatalf("%s: the next client cannot connect: %v", what, err)
	}
	defer c.Close(context.Background())
	// A server the hostile client left pinned may have been discarded
	// rather than reset: its backend then releases the advisory lock as
	// it exits, a moment later, as when a direct client leaves holding
	// one. The lock gets that moment; the settings are the next client's
	// server's own and get none.
	deadline := time.Now().Add(3 * time.Second)
	for {
		var timeout, path string
		var locked bool
		err = c.QueryRow(ctx, "select current_setting('statement_timeout'), current_setting('search_path'), pg_try_advisory_lock(77)",
			pgx.QueryExecModeSimpleProtocol).Scan(&timeout, &path, &locked)
		if err != nil {
			t.Fatalf("%s: the next client's query failed: %v", what, err)
		}
		if st := c.PgConn().TxStatus(); st != 'I' {
			t.Fatalf("%s: the next client is in transaction state %q", what, st)
		}
		if timeout != "0" || path != `"$user", public` || (!locked && time.Now().After(deadline)) {
			t.Fatalf("%s: the hostile client's state leaked: statement_timeout %q, search_path %q, advisory lock free %v", what, timeout, path, locked)
		}
		if locked {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := c.Exec(ctx, "select pg_advisory_unlock_all()"); err != nil {
		t.Fatal(err)
	}
}

// garbageModes are the proxy setups every hostile input meets.
var garbageModes = []struct {
	name string
	mode proxy.Mode
	loop bool
}{
	{"session", proxy.Session, false},
	{"transaction", proxy.Transaction, false},
	{"transaction-loop", proxy.Transaction, true},
}

func TestFramedGarbage(t *testing.T) {
	for _, m := range garbageModes {
		t.Run(m.name, func(t *testing.T) {
			g := newGarbageTarget(t, m.mode, m.loop)
			for i, seed := range garbageSeeds() {
				g.hostile(t, seed)
				g.check(t, fmt.Sprintf("seed %d", i))
			}
			// Seeds bent at random: a byte changed, cut short, or two joined.
			seed := uint64(7)
			if v, err := strconv.ParseUint(os.Getenv("QPROUTER_GARBAGE_SEED"), 10, 64); err == nil {
				seed = v // another hunt by hand
			}
			rnd := rand.New(rand.NewPCG(seed, uint64(len(m.name))))
			seeds := garbageSeeds()
			n := 150
			if testing.Short() {
				n = 30
			}
			if v, err := strconv.Atoi(os.Getenv("QPROUTER_GARBAGE_ROUNDS")); err == nil {
				n = v // a longer hunt by hand
			}
			for i := range n {
				in := append([]byte(nil), seeds[rnd.IntN(len(seeds))]...)
				switch rnd.IntN(4) {
				case 0:
					for range 1 + rnd.IntN(4) {
						in[rnd.IntN(len(in))] = byte(rnd.IntN(256))
					}
				case 1:
					in = in[:rnd.IntN(len(in))]
				case 2:
					in = append(in, seeds[rnd.IntN(len(seeds))]...)
				case 3: // a message of any frontend type with a random body, anywhere
					const types = "QPBDECSHFdcfXp?"
					body := make([]byte, rnd.IntN(24))
					for j := range body {
						body[j] = byte(rnd.IntN(256))
					}
					at := rnd.IntN(len(in) + 1)
					m := append([]byte{types[rnd.IntN(len(types))], byte(len(body))}, body...)
					in = append(in[:at:at], append(m, in[at:]...)...)
				}
				g.hostile(t, in)
				g.check(t, fmt.Sprintf("input %d %q", i, in))
			}
		})
	}
}

// rawClient is a logged-in client that writes bytes as it likes.
type rawClient struct {
	conn net.Conn
	fe   *pgproto3.Frontend
}

func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &rawClient{conn: conn, fe: pgproto3.NewFrontend(conn, conn)}
	c.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": "postgres", "database": "postgres"}})
	if err := c.fe.Flush(); err != nil {
		t.Fatal(err)
	}
	c.answers(t, 1)
	return c
}

// answers reads up to the n-th ReadyForQuery and returns the first column
// of every row, and "error" for every ErrorResponse, in order.
func (c *rawClient) answers(t testing.TB, n int) []string {
	t.Helper()
	c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	var got []string
	for n > 0 {
		m, err := c.fe.Receive()
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		switch m := m.(type) {
		case *pgproto3.DataRow:
			got = append(got, string(m.Values[0]))
		case *pgproto3.ErrorResponse:
			got = append(got, "error")
		case *pgproto3.ReadyForQuery:
			n--
		}
	}
	return got
}

// query sends simple Queries in one write and reads their answers.
func (c *rawClient) query(t *testing.T, sqls ...string) []string {
	t.Helper()
	var in []byte
	for _, q := range sqls {
		in = append(in, msg('Q', q+"\x00")...)
	}
	if _, err := c.conn.Write(framed(in)); err != nil {
		t.Fatal(err)
	}
	return c.answers(t, len(sqls))
}

// A setting changed in a statement pipelined behind a ReadyForQuery
// belongs to that statement's fate, not to the one before it: a failed
// segment before a successful set_config must not hide the change (it
// would leak to the next client of that server), and a successful one
// before a failed set_config must not make the client keep a change
// PostgreSQL rolled back.
func TestSettingsPipelinedPastReadyForQuery(t *testing.T) {
	for _, loop := range []bool{false, true} {
		t.Run(fmt.Sprintf("loop=%v", loop), func(t *testing.T) {
			r := startProxy(t, pgtest.Shared(t), cfg{mode: proxy.Transaction, size: 1, loop: loop})
			a := dialRaw(t, r.addr)
			other := func() string {
				t.Helper()
				b := dialRaw(t, r.addr)
				defer b.conn.Close()
				return strings.Join(b.query(t, "show search_path"), ",")
			}
			// A failing extended segment, then a simple Query that sets.
			in := bytes.Join([][]byte{
				msg('B', "\x00missing\x00\x00\x00\x00\x00\x00\x00"), msg('E', "\x00\x00\x00\x00\x00"), msg('S'),
				msg('Q', "select set_config('search_path', 'x', false)\x00"),
			}, nil)
			if _, err := a.conn.Write(framed(in)); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(a.answers(t, 2), ","); got != "error,x" {
				t.Fatalf("pipelined answers %q, want error,x", got)
			}
			if got := other(); got != `"$user", public` {
				t.Errorf("another client sees search_path %s: the first client's setting leaked", got)
			}
			if got := strings.Join(a.query(t, "show search_path"), ","); got != "x" {
				t.Errorf("the client's own search_path is %s after another client used its server, want x", got)
			}
			// A successful Query, then a set_config whose implicit
			// transaction fails: PostgreSQL keeps search_path x.
			if got := strings.Join(a.query(t, "select 'ok'", "select set_config('search_path', 'y', false); select 1/0"), ","); got != "ok,y,error" {
				t.Fatalf("pipelined answers %q, want ok,y,error", got)
			}
			if got := other(); got != `"$user", public` {
				t.Errorf("another client sees search_path %s", got)
			}
			if got := strings.Join(a.query(t, "show search_path"), ","); got != "x" {
				t.Errorf("the client's search_path is %s after its set_config was rolled back, want x", got)
			}
		})
	}
}

// A DEALLOCATE that PostgreSQL skips (a message before it in the same
// Sync failed) leaves the statement on the server: the client can still
// use it, and re-preparing the same text there, by this client or
// another, must not collide with the server's copy (42P05).
func TestSkippedDeallocate(t *testing.T) {
	for _, loop := range []bool{false, true} {
		t.Run(fmt.Sprintf("loop=%v", loop), func(t *testing.T) {
			r := startProxy(t, pgtest.Shared(t), cfg{mode: proxy.Transaction, size: 1, loop: loop})
			a := dialRaw(t, r.addr)
			exchange := func(c *rawClient, ms ...[]byte) string {
				t.Helper()
				if _, err := c.conn.Write(framed(bytes.Join(ms, nil))); err != nil {
					t.Fatal(err)
				}
				return strings.Join(c.answers(t, 1), ",")
			}
			parse := func(name string) []byte { return msg('P', name+"\x00select 41\x00\x00\x00") }
			bind := func(name string) []byte { return msg('B', "\x00"+name+"\x00\x00\x00\x00\x00\x00\x00") }
			exec := msg('E', "\x00\x00\x00\x00\x00")
			if got := exchange(a, parse("s1"), bind("s1"), exec, msg('S')); got != "41" {
				t.Fatalf("prepared s1: %q", got)
			}
			if got := exchange(a, bind("missing"), exec, msg('Q', "deallocate s1\x00"), msg('S')); got != "error" {
				t.Fatalf("failed Bind, then DEALLOCATE: %q, want one error", got)
			}
			if got := exchange(a, bind("s1"), exec, msg('S')); got != "41" {
				t.Errorf("the client's statement after its DEALLOCATE was skipped: %q, want 41", got)
			}
			b := dialRaw(t, r.addr)
			if got := exchange(b, parse("s9"), bind("s9"), exec, msg('S')); got != "41" {
				t.Errorf("another client preparing the same text on that server: %q, want 41", got)
			}
			if got := exchange(a, parse("s2"), bind("s2"), exec, msg('S')); got != "41" {
				t.Errorf("the client preparing the same text again: %q, want 41", got)
			}
			// In a transaction that failed meanwhile, the DEALLOCATE fails:
			// s2 stays.
			q := func(sql string) []byte { return msg('Q', sql+"\x00") }
			if got := exchange(a, q("begin"), q("select 1/0"), q("deallocate s2"), q("rollback")); got != "" {
				t.Fatalf("begin: %q", got)
			}
			if got := strings.Join(a.answers(t, 3), ","); got != "error,error" {
				t.Fatalf("division, DEALLOCATE, ROLLBACK: %q, want two errors", got)
			}
			if got := exchange(a, bind("s2"), exec, msg('S')); got != "41" {
				t.Errorf("the client's statement after its DEALLOCATE failed: %q, want 41", got)
			}
			// Behind a Bind that succeeds, the DEALLOCATE runs: s2 is
			// gone, as in PostgreSQL.
			if got := exchange(a, bind("s2"), exec, msg('Q', "deallocate s2\x00"), msg('S')); got != "41" {
				t.Fatalf("Bind, then DEALLOCATE: %q", got)
			}
			a.answers(t, 1) // the Sync's
			if got := exchange(a, bind("s2"), exec, msg('S')); got != "error" {
				t.Errorf("Bind of a deallocated statement: %q, want an error", got)
			}
		})
	}
}

// A Parse or Close of a named statement that PostgreSQL skips (pipelined
// behind a failing message) changes nothing there, so it must change
// nothing for the client either: the script runs direct and through the
// proxy, and both must give PostgreSQL's answers. The proxy had the
// client forget a statement whose Close was skipped, and keep one whose
// Parse was skipped when that Parse needed nothing from the server.
func TestSkippedParseAndClose(t *testing.T) {
	parse := func(name, sql string) []byte { return msg('P', name+"\x00"+sql+"\x00\x00\x00") }
	bind := func(name string) []byte { return msg('B', "\x00"+name+"\x00\x00\x00\x00\x00\x00\x00") }
	closeS := func(name string) []byte { return msg('C', "S"+name+"\x00") }
	exec := msg('E', "\x00\x00\x00\x00\x00")
	fail := [][]byte{bind("missing"), exec}
	failed := func(ms ...[]byte) []byte { return synced(append(fail, ms...)...) }
	runScript(t, []scriptStep{
		{"prepare s1", synced(parse("s1", "select 41"), bind("s1"), exec), "41"},
		{"skipped Close", failed(closeS("s1")), "error"},
		{"s1 after its skipped Close", synced(bind("s1"), exec), "41"},
		{"skipped Close and Parse", failed(closeS("s1"), parse("s1", "select 42")), "error"},
		{"s1 after both were skipped", synced(bind("s1"), exec), "41"},
		{"Close s1", synced(closeS("s1")), ""},
		{"skipped Parse of a text the server has", failed(parse("s1", "select 41")), "error"},
		{"s1 after its Parse was skipped", synced(bind("s1"), exec), "error"},
		{"Parse s1 again", synced(parse("s1", "select 41"), bind("s1"), exec), "41"},
		// (a Bind behind it: the proxy answers a lone Parse itself and
		// reports its error at the first Bind, as documented)
		{"failing Parse after a Close", synced(closeS("s1"), parse("s1", "select nope from nowhere"), bind("s1"), exec), "error"},
		{"s1 after the failed Parse", synced(bind("s1"), exec), "error"},
		{"skipped Parse, Close, Parse", failed(parse("s2", "select 7"), closeS("s2"), parse("s2", "select 8")), "error"},
		{"s2 after all three were skipped", synced(bind("s2"), exec), "error"},
		{"prepare s3 and the unnamed statement", synced(parse("s3", "select 3"), parse("", "select 5"), bind(""), exec), "5"},
		{"skipped Query", failed(msg('Q', "select 6\x00")), "error"},
		{"the unnamed statement after a skipped Query", synced(bind(""), exec), "5"},
		{"skipped DEALLOCATE ALL", failed(msg('Q', "deallocate all\x00")), "error"},
		{"s3 after a skipped DEALLOCATE ALL", synced(bind("s3"), exec), "3"},
		{"the unnamed statement after a skipped DEALLOCATE ALL", synced(bind(""), exec), "5"},
	})
}

// A DEALLOCATE ALL that does not run (an error before it in the same
// Query, an aborted transaction, or only a comment naming it) leaves the
// client's statements in PostgreSQL, so the proxy must keep them too; one
// that runs drops them even when the Query fails after it. The proxy
// dropped them as soon as it saw the words.
func TestDeallocateAllThatDidNotRun(t *testing.T) {
	prepare := synced(msg('P', "s1\x00select 41\x00\x00\x00"), msg('B', "\x00s1\x00\x00\x00\x00\x00\x00\x00"), msg('E', "\x00\x00\x00\x00\x00"))
	runS1 := synced(msg('B', "\x00s1\x00\x00\x00\x00\x00\x00\x00"), msg('E', "\x00\x00\x00\x00\x00"))
	q := func(sqls ...string) []byte {
		var out []byte
		for _, sql := range sqls {
			out = append(out, msg('Q', sql+"\x00")...)
		}
		return out
	}
	runScript(t, []scriptStep{
		{"prepare s1", prepare, "41"},
		{"an error before DEALLOCATE ALL", q("select 1/0; deallocate all"), "error"},
		{"s1 after it", runS1, "41"},
		{"DEALLOCATE ALL only in a comment", q("/* deallocate all */ select 2"), "2"},
		{"s1 after the comment", runS1, "41"},
		{"DEALLOCATE ALL in an aborted transaction", q("begin", "select 1/0", "deallocate all", "rollback"), "error,error"},
		{"s1 after the aborted one", runS1, "41"},
		{"a failed DEALLOCATE ALL, then one that runs", q("select 1/0; deallocate all", "deallocate all"), "error"},
		{"s1 after the second", runS1, "error"},
		{"prepare s1 again", prepare, "41"},
		{"an error after DEALLOCATE ALL", q("deallocate all; select 1/0"), "error"},
		{"s1 after it ran", runS1, "error"},
		{"prepare s1 again", prepare, "41"},
		{"DISCARD ALL", q("discard all"), ""},
		{"s1 after DISCARD ALL", runS1, "error"},
	})
}

// scriptStep is one write of a script and the answers it must get.
type scriptStep struct {
	what string
	in   []byte // messages in framed's input form
	want string // the DataRow values and "error"s, comma-separated
}

// runScript sends the steps direct to PostgreSQL and through the proxy
// (transaction mode, one server; goroutines and the event loop), one
// connection each, and checks every answer on all three.
func runScript(t *testing.T, steps []scriptStep) {
	c := pgtest.Shared(t)
	run := func(t *testing.T, addr string) {
		a := dialRaw(t, addr)
		for _, st := range steps {
			if _, err := a.conn.Write(framed(st.in)); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(a.answers(t, readyCount(st.in)), ","); got != st.want {
				t.Errorf("%s: %q, want %q", st.what, got, st.want)
			}
		}
	}
	t.Run("direct", func(t *testing.T) { run(t, fmt.Sprintf("127.0.0.1:%d", c.Port)) })
	for _, loop := range []bool{false, true} {
		t.Run(fmt.Sprintf("loop=%v", loop), func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1, loop: loop})
			run(t, r.addr)
		})
	}
}

// synced joins messages and ends them with a Sync.
func synced(ms ...[]byte) []byte {
	return append(bytes.Join(ms, nil), msg('S')...)
}

// readyCount is how many ReadyForQuery messages the messages in in
// (framed's input form) are answered with: one per Sync, and one per
// Query not behind extended-protocol messages before their Sync (the
// scripts put a Query there only behind a failing message, so that
// PostgreSQL skips it).
func readyCount(in []byte) (n int) {
	extended := false
	for len(in) >= 2 {
		switch in[0] {
		case 'S':
			n++
			extended = false
		case 'Q':
			if !extended {
				n++
			}
		default:
			extended = true
		}
		in = in[min(2+int(in[1]), len(in)):]
	}
	return n
}

// A fastpath FunctionCall of a session advisory lock or of set_config
// pins the client to its server in transaction mode, as the same call in
// SQL does: otherwise the next client on that server holds the lock or
// runs with the setting.
func TestFastpathPins(t *testing.T) {
	int8arg := binary.BigEndian.AppendUint64(nil, 77)
	// a user function may change anything; this one a setting
	var userFn uint32
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.Shared(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `create or replace function qpr_fastpath_set() returns text language sql
		as $$ select set_config('work_mem', '4321kB', false) $$`); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `select 'qpr_fastpath_set'::regproc::oid`).Scan(&userFn); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		call  pgproto3.FunctionCall
		check string // what the caller's server shows, and another's must not
		want  string
	}{
		{"pg_advisory_lock", pgproto3.FunctionCall{Function: 2880, ArgFormatCodes: []uint16{1}, Arguments: [][]byte{int8arg}},
			"select count(*) from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()", "1"},
		{"set_config", pgproto3.FunctionCall{Function: 2078, Arguments: [][]byte{[]byte("statement_timeout"), []byte("4321"), []byte("false")}},
			"show statement_timeout", "4321ms"},
		{"a user function", pgproto3.FunctionCall{Function: userFn}, "show work_mem", "4321kB"},
	} {
		for _, loop := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/loop=%v", c.name, loop), func(t *testing.T) {
				r := startProxy(t, pgtest.Shared(t), cfg{mode: proxy.Transaction, size: 2, loop: loop})
				a := dialRaw(t, r.addr)
				a.fe.Send(&c.call)
				if err := a.fe.Flush(); err != nil {
					t.Fatal(err)
				}
				if got := strings.Join(a.answers(t, 1), ","); got != "" {
					t.Fatalf("FunctionCall: %q", got)
				}
				b := dialRaw(t, r.addr)
				if got := strings.Join(b.query(t, c.check), ","); got == c.want {
					t.Errorf("another client sees the caller's %s: %s = %q", c.name, c.check, got)
				}
				if got := strings.Join(a.query(t, c.check), ","); got != c.want {
					t.Errorf("the caller after its %s: %s = %q, want %q", c.name, c.check, got, c.want)
				}
			})
		}
	}
}
