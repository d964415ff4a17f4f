package proxy_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// TestEventLoopServes runs plain transactions through a proxy with an
// event loop and requires the loop, not the goroutines, to have relayed
// nearly all of them, with the same answers as PostgreSQL gives.
func TestEventLoopServes(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 4, loop: true})
	ctx := context.Background()
	conn := connect(t, r.url("postgres"))
	const n = 300
	for i := range n {
		var got int
		mode := []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec, pgx.QueryExecModeCacheDescribe}[i%3]
		if err := conn.QueryRow(ctx, "select $1::int + 1", mode, i).Scan(&got); err != nil || got != i+1 {
			t.Fatalf("query %d (%v): %d, %v", i, mode, got, err)
		}
	}
	// Rows larger than the loop's buffers in total, in two statements.
	var count, sum int64
	if err := conn.QueryRow(ctx, "select count(*), sum(length(repeat('x', g % 100))) from (select g from generate_series(1, 200000) g) s").Scan(&count, &sum); err != nil || count != 200000 {
		t.Fatalf("aggregate: %d %v", count, err)
	}
	rows, err := conn.Query(ctx, "select g, repeat('y', 50) from generate_series(1, 50000) g")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for rows.Next() {
		var g int
		var y string
		if err := rows.Scan(&g, &y); err != nil || g != seen+1 || len(y) != 50 {
			t.Fatalf("row %d: %d %q %v", seen, g, y, err)
		}
		seen++
	}
	if rows.Err() != nil || seen != 50000 {
		t.Fatalf("rows: %d, %v", seen, rows.Err())
	}
	if got := r.LoopTransactions(); got < n {
		t.Fatalf("the loop relayed %d of %d answers", got, n+2)
	}
	// A transaction block and an error go back and forth between the loop
	// and the goroutine and stay correct.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "create temp table if not exists t_loop (x int) on commit drop"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "select 1/0"); err == nil || !strings.Contains(err.Error(), "22012") {
		t.Fatalf("division by zero: %v", err)
	}
	var one int
	if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after the error: %d %v", one, err)
	}
}

// TestEventLoopPgbench runs pgbench's select-only and TPC-B scripts in
// every protocol through the loop, more clients than servers, with no
// failed transaction, and requires the loop to have relayed most answers.
func TestEventLoopPgbench(t *testing.T) {
	c := pgtest.Shared(t)
	benchDB(t, c)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 4, loop: true, timeout: 30 * time.Second})
	before := r.LoopTransactions()
	total := 0
	for _, m := range []string{"simple", "extended", "prepared"} {
		for _, script := range [][]string{{"-S"}, {"-b", "tpcb-like"}} {
			args := append([]string{"-n", "-M", m, "-c", "12", "-j", "2", "-T", "1"}, script...)
			out := pgbench(t, r.url("bench"), args...)
			n, _ := strconv.Atoi(string(txRe.FindStringSubmatch(out)[1]))
			total += n
		}
	}
	got := r.LoopTransactions() - before
	t.Logf("the loop relayed %d answers for %d pgbench transactions", got, total)
	if got < int64(total)/2 {
		t.Fatalf("the loop relayed %d answers for %d pgbench transactions", got, total)
	}
}
