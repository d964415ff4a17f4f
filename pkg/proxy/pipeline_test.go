package proxy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// Batches (pgx pipelines them) with an error in the middle, in every exec
// mode: results before the error arrive, the rest of the batch fails as
// PostgreSQL does, and the connection stays usable.
func TestBatchWithError(t *testing.T) {
	c := pgtest.Shared(t)
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m, size: 2})
			conn := connect(t, r.url("postgres"))
			ctx := context.Background()
			for _, em := range execModes {
				b := &pgx.Batch{}
				b.Queue("select $1::int + 1", 1)
				b.Queue("select 'two'::text")
				b.Queue("select 1/$1::int", 0)
				b.Queue("select $1::int", 4)
				br := conn.SendBatch(ctx, b)
				var n int
				var s string
				if err := br.QueryRow().Scan(&n); err != nil || n != 2 {
					t.Fatalf("%v: first: %d %v", em, n, err)
				}
				if err := br.QueryRow().Scan(&s); err != nil || s != "two" {
					t.Fatalf("%v: second: %q %v", em, s, err)
				}
				if err := br.QueryRow().Scan(&n); err == nil || !strings.Contains(err.Error(), "22012") {
					t.Fatalf("%v: third: %v", em, err)
				}
				br.Close()
				if err := conn.QueryRow(ctx, "select $1::int * 3", 3).Scan(&n); err != nil || n != 9 {
					t.Fatalf("%v: after batch: %d %v", em, n, err)
				}
			}
		})
	}
}

// A raw pgconn pipeline: prepare on one Sync, use in later ones, an
// error between, a standalone Describe of a named statement.
func TestPipelineRaw(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 2})
	conn := connect(t, r.url("postgres"))
	pc := conn.PgConn()
	ctx := context.Background()
	p := pc.StartPipeline(ctx)
	p.SendPrepare("s1", "select $1::int * 10", nil)
	p.SendQueryPrepared("s1", [][]byte{[]byte("4")}, nil, nil)
	p.Sync()
	p.SendQueryParams("select 1/0", nil, nil, nil, nil)
	p.SendQueryPrepared("s1", [][]byte{[]byte("5")}, nil, nil) // skipped after the error
	p.Sync()
	p.SendQueryPrepared("s1", [][]byte{[]byte("6")}, nil, nil)
	p.SendDeallocate("s1")
	p.Sync()
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		res, err := p.GetResults()
		if err != nil {
			got = append(got, "err:"+err.Error())
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
			if rr.Err != nil {
				got = append(got, "err:"+rr.Err.Error())
			} else if len(rr.Rows) > 0 {
				got = append(got, string(rr.Rows[0][0]))
			}
		case *pgconn.PipelineSync:
			got = append(got, "sync")
		case *pgconn.CloseComplete:
			got = append(got, "closed")
		}
		if len(got) > 20 {
			break
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(got, " ")
	if !strings.HasPrefix(text, "prepared 40 sync err:") || !strings.Contains(text, "22012") || !strings.HasSuffix(text, "sync 60 closed sync") {
		t.Fatalf("pipeline results: %s", text)
	}
	// Describe of a statement prepared earlier, now maybe on another server.
	if _, err := pc.Prepare(ctx, "s2", "select $1::text || 'x'", nil); err != nil {
		t.Fatal(err)
	}
	other := connect(t, r.url("postgres"))
	tx, _ := other.Begin(ctx) // hold one server so s2 may move
	tx.Exec(ctx, "select 1")
	defer tx.Rollback(ctx)
	fe := pc.Frontend()
	fe.Send(&pgproto3.Describe{ObjectType: 'S', Name: "s2"})
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	var answers []string
	for {
		msg, err := pc.ReceiveMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *pgproto3.ParameterDescription:
			answers = append(answers, fmt.Sprintf("params:%d", len(m.ParameterOIDs)))
		case *pgproto3.RowDescription:
			answers = append(answers, fmt.Sprintf("columns:%d", len(m.Fields)))
		case *pgproto3.ErrorResponse:
			answers = append(answers, "error:"+m.Message)
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	if got := strings.Join(answers, " "); got != "params:1 columns:1" {
		t.Fatalf("standalone Describe of s2: %s", got)
	}
	// and a second Parse of the name is PostgreSQL's 42P05
	if _, err := pc.Prepare(ctx, "s2", "select 1", nil); err == nil || !strings.Contains(err.Error(), `prepared statement "s2" already exists (SQLSTATE 42P05)`) {
		t.Fatalf("Parse of a name in use: %v", err)
	}
	res := pc.ExecPrepared(ctx, "s2", [][]byte{[]byte("a")}, nil, nil).Read()
	if res.Err != nil || string(res.Rows[0][0]) != "ax" {
		t.Fatalf("exec s2: %v", res.Err)
	}
}

// A tiny per-server LRU: statements are evicted (closed on the server)
// and parsed again on demand.
func TestPreparedEviction(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1, lru: 3})
	conn := connect(t, r.url("postgres"))
	ctx := context.Background()
	for round := range 3 {
		for i := range 8 {
			var n int
			q := "select $1::int + " + strings.Repeat("0 + ", i) + "0"
			if err := conn.QueryRow(ctx, q, i).Scan(&n); err != nil || n != i {
				t.Fatalf("round %d query %d: %d %v", round, i, n, err)
			}
		}
	}
	var count int
	if err := conn.QueryRow(ctx, "select count(*) from pg_prepared_statements where name like 'qpr_%'", pgx.QueryExecModeSimpleProtocol).Scan(&count); err != nil || count > 3 {
		t.Fatalf("server holds %d renamed statements (max 3): %v", count, err)
	}
}

// TestPipelineEventsPastHeld: a pipeline of more statements than a relay
// holds back before its ReadyForQuery reports each one once, in order.
func TestPipelineEventsPastHeld(t *testing.T) {
	c := pgtest.Shared(t)
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m, size: 2, events: true})
			conn := connect(t, r.url("postgres"))
			ctx := context.Background()
			p := conn.PgConn().StartPipeline(ctx)
			const n = 150 // more than twice maxHeldEvents
			for i := range n {
				p.SendQueryParams(fmt.Sprintf("select %d", i), nil, nil, nil, nil)
			}
			p.Sync()
			if err := p.Flush(); err != nil {
				t.Fatal(err)
			}
			for {
				res, err := p.GetResults()
				if err != nil {
					t.Fatal(err)
				}
				if rr, ok := res.(*pgconn.ResultReader); ok {
					rr.Close()
				}
				if _, ok := res.(*pgconn.PipelineSync); ok {
					break
				}
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				select {
				case e := <-r.events:
					if want := fmt.Sprintf("select %d", i); e.SQL != want {
						t.Fatalf("event %d: %q, want %q", i, e.SQL, want)
					}
				case <-time.After(3 * time.Second):
					t.Fatalf("event %d missing", i)
				}
			}
			select {
			case e := <-r.events:
				t.Errorf("extra event %q", e.SQL)
			case <-time.After(100 * time.Millisecond):
			}
		})
	}
}
