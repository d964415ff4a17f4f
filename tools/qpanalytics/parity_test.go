package main

// TPC-H parity end to end: PostgreSQL loaded with TPC-H, a snapshot taken
// with the snapshot command, the copy served by the serve command, and the
// 22 queries (as `tpchgen queries` prints them) run through real pgx
// clients against both. SF 0.1 by default; SF 1 with scripts/test --long
// (TPCH_LONG=1), where the answers are also checked against the official
// SF 1 answer set in testdata/answers.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/tpch"
	"github.com/qpkit/qpkit/pkg/tpchload"
)

var tpchTables = "lineitem,orders,customer,part,partsupp,supplier,nation,region"

func TestTPCHParity(t *testing.T) {
	sf := 0.1
	if os.Getenv("TPCH_LONG") == "1" {
		sf = 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	db := pgtest.Start(t, pgtest.Options{})
	start := time.Now()
	if err := tpchload.LoadPostgres(ctx, db.URL(), sf, true); err != nil {
		t.Fatal(err)
	}
	t.Logf("SF %g loaded into PostgreSQL in %v", sf, time.Since(start).Round(time.Millisecond))

	target := filepath.Join(t.TempDir(), "tpch.duckdb")
	var out, errs bytes.Buffer
	start = time.Now()
	if code := run(ctx, []string{"snapshot", "--source", db.URL(), "--tables", tpchTables, "--target", target, "--verify"}, &out, &errs); code != 0 {
		t.Fatalf("snapshot exited %d\n%s", code, errs.String())
	}
	t.Logf("snapshot in %v", time.Since(start).Round(time.Millisecond))
	if !strings.Contains(out.String(), `"type":"snapshot"`) || !strings.Contains(out.String(), `"verified":true`) {
		t.Errorf("snapshot record: %s", out.String())
	}

	addr := serve(t, ctx, target)
	qpa := connect(t, ctx, "postgres://tester@"+addr+"/tpch?sslmode=disable")
	pg := connect(t, ctx, db.URL())

	for n := 1; n <= 22; n++ {
		sql, err := tpch.Query(n)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("Q%d", n), func(t *testing.T) {
			want := query(t, ctx, pg, sql, pgx.QueryExecModeSimpleProtocol)
			if len(want.rows) == 0 {
				t.Fatalf("PostgreSQL returned no rows: the test would compare nothing")
			}
			// Text results over the simple protocol, then binary results over
			// the extended protocol (pgx's default for known types).
			for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
				got := query(t, ctx, qpa, sql, mode)
				if d := diff(want, got, false); d != "" {
					t.Errorf("%v: %s", mode, d)
				}
			}
			if sf == 1 {
				ans, err := readAnswer(fmt.Sprintf("testdata/answers/q%d.out", n))
				if err != nil {
					t.Fatal(err)
				}
				got := query(t, ctx, qpa, sql, pgx.QueryExecModeSimpleProtocol)
				if d := diffAnswer(ans, got); d != "" {
					t.Errorf("against the official answer: %s", d)
				}
			}
		})
	}
}

// serve runs the serve command (with extra flags) on a free port until
// the test ends and returns its address.
func serve(t *testing.T, ctx context.Context, db string, extra ...string) string {
	t.Helper()
	sctx, stop := context.WithCancel(ctx)
	addrc := make(chan string, 1)
	done := make(chan int, 1)
	var errs bytes.Buffer
	go func() {
		args := append([]string{"serve", "--db", db, "--listen", "127.0.0.1:0"}, extra...)
		done <- runReady(sctx, args, &bytes.Buffer{}, &errs, func(a string) { addrc <- a })
	}()
	t.Cleanup(func() {
		stop()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d after SIGTERM-like stop\n%s", code, errs.String())
		}
	})
	select {
	case a := <-addrc:
		return a
	case code := <-done:
		t.Fatalf("serve exited %d before listening\n%s", code, errs.String())
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start listening in 30 s")
	}
	return ""
}

func connect(t *testing.T, ctx context.Context, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// query runs sql and renders every value as text: the raw text of a text
// result, or a PostgreSQL-like rendering of a decoded binary value.
func query(t *testing.T, ctx context.Context, c *pgx.Conn, sql string, mode pgx.QueryExecMode) result {
	t.Helper()
	rows, err := c.Query(ctx, sql, mode)
	if err != nil {
		t.Fatalf("%v: %v", mode, err)
	}
	defer rows.Close()
	var r result
	for _, f := range rows.FieldDescriptions() {
		r.cols = append(r.cols, f.Name)
	}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = render(v)
		}
		r.rows = append(r.rows, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%v: %v", mode, err)
	}
	return r
}
