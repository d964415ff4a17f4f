package proxy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// pipe sends one pipeline of steps on pc, ending each group at "sync", and
// returns what came back as short strings, errors as "err:SQLSTATE message".
func pipe(t *testing.T, pc *pgconn.PgConn, steps ...func(p *pgconn.Pipeline)) []string {
	t.Helper()
	ctx := context.Background()
	p := pc.StartPipeline(ctx)
	for _, s := range steps {
		s(p)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 50 {
		res, err := p.GetResults()
		if err != nil {
			got = append(got, "err:"+sqlErr(err))
			continue
		}
		if res == nil {
			break
		}
		switch v := res.(type) {
		case *pgconn.StatementDescription:
			got = append(got, "prepared")
		case *pgconn.ResultReader:
			rr := v.Read()
			switch {
			case rr.Err != nil:
				got = append(got, "err:"+sqlErr(rr.Err))
			case len(rr.Rows) > 0:
				got = append(got, string(rr.Rows[0][0]))
			default:
				got = append(got, rr.CommandTag.String())
			}
		case *pgconn.PipelineSync:
			got = append(got, "sync")
		case *pgconn.CloseComplete:
			got = append(got, "closed")
		}
	}
	if err := p.Close(); err != nil {
		got = append(got, "close:"+sqlErr(err))
	}
	return got
}

func sqlErr(err error) string {
	if pe, ok := err.(*pgconn.PgError); ok {
		return pe.Code + " " + pe.Message
	}
	return err.Error()
}

func simple(pc *pgconn.PgConn, sql string) string {
	res, err := pc.Exec(context.Background(), sql).ReadAll()
	if err != nil {
		return "err:" + sqlErr(err)
	}
	var out []string
	for _, r := range res {
		if r.Err != nil {
			out = append(out, "err:"+sqlErr(r.Err))
		} else {
			out = append(out, r.CommandTag.String())
		}
	}
	return strings.Join(out, ",")
}

func prepare(name, sql string) func(*pgconn.Pipeline) {
	return func(p *pgconn.Pipeline) { p.SendPrepare(name, sql, nil) }
}

func execPrepared(name string, args ...string) func(*pgconn.Pipeline) {
	return func(p *pgconn.Pipeline) {
		var params [][]byte
		for _, a := range args {
			params = append(params, []byte(a))
		}
		p.SendQueryPrepared(name, params, nil, nil)
	}
}

func syncStep(p *pgconn.Pipeline) { p.Sync() }

// compareDirect runs scenario against PostgreSQL directly and through the
// proxy in both modes (in transaction mode a pool of 1, so the other
// client takes the server between transactions) and wants the same transcript.
func compareDirect(t *testing.T, scenario func(t *testing.T, a, b *pgconn.PgConn) []string) {
	compareDirectWith(t, cfg{}, scenario)
}

// compareDirectWith is compareDirect with the proxy's options in o (its
// mode and size are compareDirect's).
func compareDirectWith(t *testing.T, o cfg, scenario func(t *testing.T, a, b *pgconn.PgConn) []string) {
	c := pgtest.Shared(t)
	run := func(url string) []string {
		a, b := connect(t, url), connect(t, url)
		return scenario(t, a.PgConn(), b.PgConn())
	}
	want := strings.Join(run(c.URL()), "\n")
	for _, m := range modes {
		size := 1 // transaction mode: one server for both clients
		if m == proxy.Session {
			size = 2
		}
		o.mode, o.size = m, size
		r := startProxy(t, c, o)
		got := strings.Join(run(r.url("postgres")), "\n")
		if got != want {
			t.Errorf("%v: through the proxy:\n%s\ndirect:\n%s", m, got, want)
		}
	}
}

// The unnamed statement survives the server going to another client
// between transactions (it is parsed again), never runs another client's
// unnamed statement, and is dropped by a simple Query as PostgreSQL does.
func TestUnnamedStatementAcrossTransactions(t *testing.T) {
	compareDirect(t, func(t *testing.T, a, b *pgconn.PgConn) []string {
		var out []string
		add := func(s ...string) { out = append(out, strings.Join(s, " ")) }
		add(pipe(t, a, prepare("", "select $1::int * 2"), syncStep)...)
		add(pipe(t, b, prepare("", "select 'b:' || $1::text"), syncStep)...)
		add(pipe(t, a, execPrepared("", "21"), syncStep)...)
		add(pipe(t, b, execPrepared("", "x"), syncStep)...)
		add(pipe(t, a, execPrepared("", "5"), syncStep)...)
		add(simple(a, "select 1"))
		add(pipe(t, a, execPrepared("", "7"), syncStep)...) // dropped by the Query
		add(pipe(t, b, execPrepared("", "y"), syncStep)...)
		// a has none now, even after b used the server
		add(pipe(t, a, execPrepared("", "8"), syncStep)...)
		// a failed Parse leaves no unnamed statement
		add(pipe(t, b, prepare("", "select nope"), syncStep)...)
		add(pipe(t, a, prepare("", "select $1::int + 1"), syncStep)...)
		add(pipe(t, b, execPrepared("", "z"), syncStep)...)
		add(pipe(t, a, execPrepared("", "1"), syncStep)...)
		return out
	})
}

// Parse of a name in use is 42P05 naming the client's statement, and the
// old statement stays.
func TestStatementNameInUse(t *testing.T) {
	compareDirect(t, func(t *testing.T, a, b *pgconn.PgConn) []string {
		var out []string
		add := func(s ...string) { out = append(out, strings.Join(s, " ")) }
		add(pipe(t, a, prepare("s", "select 1"), syncStep)...)
		add(pipe(t, b, prepare("s", "select 'b'"), syncStep)...)
		add(pipe(t, a, prepare("s", "select 2"), execPrepared("s"), syncStep, execPrepared("s"), syncStep)...)
		add(simple(b, "begin"))
		add(pipe(t, b, prepare("s", "select 'again'"), syncStep)...)
		add(simple(b, "rollback"))
		add(pipe(t, b, execPrepared("s"), syncStep)...)
		return out
	})
}

// DEALLOCATE name of a protocol-level statement deallocates it under the
// name the server knows, inside and outside transactions.
func TestDeallocateByName(t *testing.T) {
	compareDirect(t, func(t *testing.T, a, b *pgconn.PgConn) []string {
		var out []string
		add := func(s ...string) { out = append(out, strings.Join(s, " ")) }
		add(pipe(t, a, prepare("s", "select 1"), syncStep)...)
		add(pipe(t, b, prepare("S x", "select 'b'"), execPrepared("S x"), syncStep)...)
		add(simple(a, "DEALLOCATE s"))
		add(simple(a, "deallocate prepare s"))
		add(pipe(t, a, prepare("s", "select 'new'"), execPrepared("s"), syncStep)...)
		add(simple(b, `DEALLOCATE "S x";`))
		add(pipe(t, b, execPrepared("S x"), syncStep)...)
		add(simple(a, "begin"))
		add(simple(a, "deallocate s"))
		add(simple(a, "commit"))
		add(pipe(t, a, execPrepared("s"), syncStep)...)
		add(pipe(t, a, prepare("s", "select 'newer'"), execPrepared("s"), syncStep)...)
		// text that only looks like a DEALLOCATE: the proxy forgets what
		// the server has, and still uses statements the server kept
		add(simple(a, "select 'discard deallocate all'"))
		add(pipe(t, a, execPrepared("s"), syncStep)...)
		add(pipe(t, b, prepare("t", "select 't'"), execPrepared("t"), syncStep)...)
		return out
	})
}
