package duckwire

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/jackc/pgx/v5"

	"github.com/qpkit/qpkit/pkg/duckdialect"
	"github.com/qpkit/qpkit/pkg/tpch"
	"github.com/qpkit/qpkit/pkg/tpchload"
)

// tpchDB returns a DuckDB file with TPC-H at sf: DUCKWIRE_TPCH_DB when set
// (loaded on first use, reused after), else a fresh temporary file.
func tpchDB(t *testing.T, sf float64) string {
	path := os.Getenv("DUCKWIRE_TPCH_DB")
	if path == "" {
		path = filepath.Join(t.TempDir(), "tpch.duckdb")
	} else if _, err := os.Stat(path); err == nil {
		return path
	}
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Now()
	if err := tpchload.LoadDuckDB(context.Background(), db, sf); err != nil {
		t.Fatal(err)
	}
	t.Logf("SF %g loaded into DuckDB in %v", sf, time.Since(t0).Round(time.Millisecond))
	return path
}

// directDB opens the file as the server does, for the baseline: the same
// queries run on DuckDB itself.
func directDB(t *testing.T, path string) *sql.DB {
	conn, err := duckdb.NewConnector(path+"?access_mode=read_only&enable_external_access=false", func(e driver.ExecerContext) error {
		for _, q := range duckdialect.SessionSQL() {
			if _, err := e.ExecContext(context.Background(), q, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}

func timeDirect(t *testing.T, db *sql.DB, q string) time.Duration {
	dq, err := duckdialect.Translate(q)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rows, err := db.Query(dq)
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	for i := range vals {
		vals[i] = new(any)
	}
	for rows.Next() {
		rows.Scan(vals...)
	}
	rows.Close()
	return time.Since(start)
}

func timeServer(t *testing.T, c *pgx.Conn, n int, q string) (time.Duration, int) {
	start := time.Now()
	rows, err := c.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("Q%d: %v", n, err)
	}
	nrows := 0
	for rows.Next() {
		if _, err := rows.Values(); err != nil {
			t.Fatalf("Q%d: %v", n, err)
		}
		nrows++
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("Q%d: %v", n, err)
	}
	return time.Since(start), nrows
}

// TestTPCHThroughServer runs the 22 TPC-H queries through the server in
// pgx's default (extended, binary) and simple modes at SF 0.01, or at
// DUCKWIRE_TPCH_SF. Each query is compared with itself run on DuckDB
// directly (interleaved, best of two each): the server may add at most
// 25% + 50 ms per query. With
// DUCKWIRE_TPCH_BUDGET=1 at SF 1, the 22 queries must also take <= 5 s.
func TestTPCHThroughServer(t *testing.T) {
	sf := 0.01
	if v := os.Getenv("DUCKWIRE_TPCH_SF"); v != "" {
		var err error
		if sf, err = strconv.ParseFloat(v, 64); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	path := tpchDB(t, sf)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- Serve(sctx, Config{Database: path, Listener: ln, Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	}()
	defer func() { cancel(); <-done }()
	direct := directDB(t, path)
	for _, simple := range []bool{false, true} {
		c := connect(t, "postgres://bench@"+ln.Addr().String()+"/tpch?sslmode=disable", simple)
		var total, directTotal time.Duration
		rowsTotal := 0
		for n := 1; n <= 22; n++ {
			q, _ := tpch.Query(n)
			// Interleaved, best of two on each path: the machine is shared.
			best, bestDirect := time.Duration(1<<62), time.Duration(1<<62)
			nrows := 0
			for range 2 {
				bestDirect = min(bestDirect, timeDirect(t, direct, q))
				var d time.Duration
				d, nrows = timeServer(t, c, n, q)
				best = min(best, d)
			}
			t.Logf("simple=%v Q%d: server %v, direct %v", simple, n, best.Round(time.Millisecond), bestDirect.Round(time.Millisecond))
			total += best
			directTotal += bestDirect
			rowsTotal += nrows
			if nrows == 0 {
				t.Errorf("Q%d: no rows", n)
			}
		}
		direct := directTotal
		t.Logf("simple=%v SF %g: 22 queries in %v through the server (%d rows), %v on DuckDB directly",
			simple, sf, total.Round(time.Millisecond), rowsTotal, direct.Round(time.Millisecond))
		if limit := direct*5/4 + 22*50*time.Millisecond; total > limit {
			t.Errorf("server took %v, over %v (direct DuckDB %v)", total, limit, direct)
		}
		if sf == 1 && os.Getenv("DUCKWIRE_TPCH_BUDGET") == "1" && total > 5*time.Second {
			t.Errorf("22 queries took %v at SF 1, over the 5 s budget", total)
		}
	}
}
