package proxy_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// Rows of every size around the relay's 32 KiB read buffer, many small
// ones forwarded in batches and big ones straddling the buffer, arrive
// exactly as PostgreSQL sends them.
func TestRowsAcrossReadBuffer(t *testing.T) {
	c := pgtest.Shared(t)
	const q = `select i, repeat(chr(65 + i % 26), (i * 7919) % 70000) from generate_series(1, 3000) i
		union all select i, 'x' from generate_series(1, 20000) i`
	sum := func(url string) string {
		conn := connect(t, url)
		rows, err := conn.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		h := sha256.New()
		n := 0
		for rows.Next() {
			var i int
			var s string
			if err := rows.Scan(&i, &s); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(h, "%d:%s\n", i, s)
			n++
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d rows %x", n, h.Sum(nil))
	}
	want := sum(c.URL())
	for _, m := range modes {
		r := startProxy(t, c, cfg{mode: m, size: 2})
		if got := sum(r.url("postgres")); got != want {
			t.Errorf("%v: %s, direct %s", m, got, want)
		}
	}
}

// Rows the server has sent reach the client while the server is still
// working on the rest: here about 16 kB of rows go out in two full send
// buffers, each ending inside a row, then the query sleeps for 2 s. Before
// the relay flushed ahead of every wait, the rows it held waited for the
// server's next bytes, after the sleep.
func TestRowsNotHeldWhileServerWorks(t *testing.T) {
	c := pgtest.Shared(t)
	const q = `select repeat('x', 100) from generate_series(1, 200)
		union all select pg_sleep(2)::text`
	for _, m := range modes {
		r := startProxy(t, c, cfg{mode: m, size: 2})
		conn := connect(t, r.url("postgres"))
		start := time.Now()
		rows, err := conn.Query(context.Background(), q, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatal(err)
		}
		if !rows.Next() {
			t.Fatalf("%v: no row: %v", m, rows.Err())
		}
		first := time.Since(start)
		for rows.Next() {
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if first > time.Second {
			t.Errorf("%v: the first row came after %v, behind the server's 2 s pause", m, first)
		}
	}
}

// A long answer on the event loop gets a low-water mark on its server
// socket (one wake-up per 64 KiB instead of per 8 KiB write), and the
// rows short of the mark still come at once: here 1.6 MB of rows, then
// the query sleeps for 2 s; the 14,800 rows that PostgreSQL sends before
// the pause (it holds back the last part of a send buffer, 73 rows at
// most) must be there well before it ends. The next answers, short ones
// on the same server (pool size 1), must come too.
func TestLongAnswerTailNotHeld(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1, loop: true})
	conn := connect(t, r.url("postgres"))
	const q = `select repeat('x', 100) from generate_series(1, 15000)
		union all select pg_sleep(2)::text`
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		before := r.LoopTransactions()
		start := time.Now()
		rows, err := conn.Query(ctx, q, mode)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for n < 14800 && rows.Next() {
			n++
		}
		took := time.Since(start)
		for rows.Next() {
			n++
		}
		rows.Close()
		if err := rows.Err(); err != nil || n != 15001 {
			t.Fatalf("%v: %d rows, %v", mode, n, err)
		}
		if took > time.Second {
			t.Errorf("%v: the 14,800 rows before the pause took %v", mode, took)
		}
		if r.LoopTransactions() == before {
			t.Errorf("%v: the loop did not relay the long answer", mode)
		}
		for i := range 20 {
			var got int
			if err := conn.QueryRow(ctx, "select $1::int", mode, i).Scan(&got); err != nil || got != i {
				t.Fatalf("%v: short query %d after the long answer: %d %v", mode, i, got, err)
			}
		}
		cancel()
	}
}
