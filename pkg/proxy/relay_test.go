package proxy_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
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
