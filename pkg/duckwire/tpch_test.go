package duckwire

import (
	"context"
	"database/sql"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/qpkit/qpkit/pkg/tpch"
	"github.com/qpkit/qpkit/pkg/tpchload"
)

// TestTPCHThroughServer runs the 22 TPC-H queries through the server with
// pgx's default (extended, binary) mode at SF 0.01, or at
// DUCKWIRE_TPCH_SF (e.g. 1) where, at SF 1, all 22 must take at most 5 s.
func TestTPCHThroughServer(t *testing.T) {
	sf := 0.01
	if v := os.Getenv("DUCKWIRE_TPCH_SF"); v != "" {
		var err error
		if sf, err = strconv.ParseFloat(v, 64); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tpch.duckdb")
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := tpchload.LoadDuckDB(ctx, db, sf); err != nil {
		t.Fatal(err)
	}
	db.Close()
	t.Logf("SF %g loaded into DuckDB in %v", sf, time.Since(t0).Round(time.Millisecond))
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
	for _, simple := range []bool{false, true} {
		c := connect(t, "postgres://bench@"+ln.Addr().String()+"/tpch?sslmode=disable", simple)
		var total time.Duration
		var rowsTotal int
		for n := 1; n <= 22; n++ {
			q, err := tpch.Query(n)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			rows, err := c.Query(ctx, q)
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
			d := time.Since(start)
			total += d
			rowsTotal += nrows
			if nrows == 0 && n != 15 { // every query but Q15's view-less form returns rows
				t.Errorf("Q%d: no rows", n)
			}
			t.Logf("simple=%v Q%d %d rows %v", simple, n, nrows, d.Round(time.Microsecond))
		}
		t.Logf("simple=%v SF %g: 22 queries in %v (%d rows)", simple, sf, total.Round(time.Millisecond), rowsTotal)
		if sf == 1 && total > 5*time.Second {
			t.Errorf("22 queries took %v at SF 1, over the 5 s budget", total)
		}
	}
}
