package proxy_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// BenchmarkPipelines times one round of a client's pattern on one
// connection, directly and through the proxy in transaction mode (on
// goroutines and on the event loop), and reports the waits at the fence
// (fence.go) per round:
//
//   - named: 10 Sync groups in one write, each parsing a statement of a
//     name not in use, binding and executing it (postgres.js with prepare:
//     true pipelining statements it has not prepared yet), after one group
//     that closes the previous round's names;
//
//   - unnamed: 10 groups parsing, binding and executing the unnamed statement;
//
//   - steady: 10 groups binding and executing statements prepared before;
//
//   - describe: Parse, Describe and Flush, the answer awaited, then Bind,
//     Execute and Sync (postgres.js's first use of a statement whose
//     parameter types it does not know).
//
//     go test -run '^$' -bench Pipelines -benchtime 2000x ./proxy/
func BenchmarkPipelines(b *testing.B) {
	c := pgtest.Shared(b)
	const groups = 10
	paths := []struct {
		name string
		cfg  *cfg
	}{
		{"direct", nil},
		{"goroutines", &cfg{mode: proxy.Transaction, size: 4}},
		{"loop", &cfg{mode: proxy.Transaction, size: 4, loop: true}},
	}
	for _, path := range paths {
		url := c.URL()
		var r *running
		if path.cfg != nil {
			r = startProxy(b, c, *path.cfg)
			url = r.url("postgres")
		}
		for _, pattern := range []string{"named", "unnamed", "steady", "describe"} {
			b.Run(path.name+"/"+pattern, func(b *testing.B) {
				ctx := context.Background()
				conn, err := pgconn.Connect(ctx, url)
				if err != nil {
					b.Fatal(err)
				}
				defer conn.Close(ctx)
				if pattern == "steady" {
					p := conn.StartPipeline(ctx)
					for j := range groups {
						p.SendPrepare(fmt.Sprintf("st%d", j), fmt.Sprintf("select %d + $1::int", j), nil)
					}
					p.Sync()
					drainPipeline(b, p)
				}
				var waits int64
				if r != nil {
					waits = r.FenceWaits()
				}
				arg := [][]byte{[]byte("1")}
				b.ResetTimer()
				for i := range b.N {
					if pattern == "describe" {
						describeThenRun(ctx, b, conn, arg)
						continue
					}
					p := conn.StartPipeline(ctx)
					if pattern == "named" && i > 0 {
						for j := range groups {
							p.SendDeallocate(fmt.Sprintf("n%d_%d", (i-1)%2, j))
						}
						p.Sync()
					}
					for j := range groups {
						switch pattern {
						case "named":
							name := fmt.Sprintf("n%d_%d", i%2, j)
							p.SendPrepare(name, fmt.Sprintf("select %d + $1::int", j), nil)
							p.SendQueryPrepared(name, arg, nil, nil)
						case "unnamed":
							p.SendQueryParams(fmt.Sprintf("select %d + $1::int", j), arg, nil, nil, nil)
						case "steady":
							p.SendQueryPrepared(fmt.Sprintf("st%d", j), arg, nil, nil)
						}
						p.Sync()
					}
					drainPipeline(b, p)
				}
				b.StopTimer()
				if r != nil {
					b.ReportMetric(float64(r.FenceWaits()-waits)/float64(b.N), "waits/op")
				}
			})
		}
	}
}

// describeThenRun parses and describes the unnamed statement and waits
// after a Flush, then binds, executes and syncs it, with pgconn's
// low-level calls: a pipeline reads no results before a Sync.
func describeThenRun(ctx context.Context, b *testing.B, conn *pgconn.PgConn, arg [][]byte) {
	fe := conn.Frontend()
	fe.Send(&pgproto3.Parse{Query: "select 7 + $1::int"})
	fe.Send(&pgproto3.Describe{ObjectType: 'S'})
	fe.Send(&pgproto3.Flush{})
	if err := fe.Flush(); err != nil {
		b.Fatal(err)
	}
	until := func(done func(pgproto3.BackendMessage) bool) {
		for {
			m, err := conn.ReceiveMessage(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if e, ok := m.(*pgproto3.ErrorResponse); ok {
				b.Fatal(e.Message)
			}
			if done(m) {
				return
			}
		}
	}
	until(func(m pgproto3.BackendMessage) bool { _, ok := m.(*pgproto3.RowDescription); return ok })
	fe.Send(&pgproto3.Bind{Parameters: arg})
	fe.Send(&pgproto3.Execute{})
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		b.Fatal(err)
	}
	until(func(m pgproto3.BackendMessage) bool { _, ok := m.(*pgproto3.ReadyForQuery); return ok })
}

// drainPipeline reads every result of p, failing on an error, and closes it.
func drainPipeline(b *testing.B, p *pgconn.Pipeline) {
	for {
		res, err := p.GetResults()
		if err != nil {
			b.Fatal(err)
		}
		switch res := res.(type) {
		case nil:
			if err := p.Close(); err != nil {
				b.Fatal(err)
			}
			return
		case *pgconn.ResultReader:
			if _, err := res.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
