package main

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

// --pool-mode statement, on the event loop and on goroutines: statements
// on their own, a simple Query holding a whole transaction and an
// extended-protocol pipeline run; a transaction left open after a
// ReadyForQuery closes the client with PgBouncer's FATAL and its server
// is discarded, not handed to the next client; a pinned client keeps its
// server and may open transactions; psql sees the same.
func TestStatementMode(t *testing.T) {
	c := pgtest.Shared(t)
	for _, loop := range []string{"--event-loop", "--no-event-loop"} {
		t.Run(loop, func(t *testing.T) {
			url, stop := startRouter(t, c.URL(), "--pool-mode", "statement", "--pool-size", "1", loop)
			defer stop()
			bg := context.Background()
			connect := func() *pgx.Conn {
				t.Helper()
				cn, err := pgx.Connect(bg, url)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cn.Close(bg) })
				return cn
			}
			a := connect()
			for i := range 3 {
				var n int
				if err := a.QueryRow(bg, "select $1::int + 1", i).Scan(&n); err != nil || n != i+1 {
					t.Fatalf("statement %d: %d %v", i, n, err)
				}
			}
			if _, err := a.Exec(bg, "begin; select 1; commit", pgx.QueryExecModeSimpleProtocol); err != nil {
				t.Fatalf("a transaction in one Query: %v", err)
			}
			b := &pgx.Batch{}
			b.Queue("select 1")
			b.Queue("select 2")
			if err := a.SendBatch(bg, b).Close(); err != nil {
				t.Fatalf("a pipeline: %v", err)
			}

			_, err := a.Exec(bg, "begin")
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Severity != "FATAL" || pe.Code != "08P01" || pe.Message != "transaction blocks not allowed in statement pooling mode" {
				t.Fatalf("BEGIN: want PgBouncer's FATAL, got %v", err)
			}
			if _, err := a.Exec(bg, "select 1"); err == nil {
				t.Error("the client is still served after the FATAL")
			}

			// The pool's one server went away with the open transaction:
			// the next client gets a fresh one, outside any transaction.
			d := connect()
			var inTx bool
			if err := d.QueryRow(bg, "select now() <> statement_timestamp()", pgx.QueryExecModeSimpleProtocol).Scan(&inTx); err != nil || inTx {
				t.Fatalf("the next client: in a transaction %v, %v", inTx, err)
			}
			// A pinned client keeps its server: a transaction is fine.
			if _, err := d.Exec(bg, "select pg_advisory_lock(4242)"); err != nil {
				t.Fatal(err)
			}
			tx, err := d.Begin(bg)
			if err != nil {
				t.Fatalf("BEGIN when pinned: %v", err)
			}
			if err := tx.Commit(bg); err != nil {
				t.Fatalf("COMMIT when pinned: %v", err)
			}
			if _, err := d.Exec(bg, "select pg_advisory_unlock(4242)"); err != nil {
				t.Fatal(err)
			}
			d.Close(bg)

			host, port, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(url, "postgres://postgres@"), "/postgres?sslmode=disable"))
			out, _ := exec.Command("psql", "-X", "-h", host, "-p", port, "-U", "postgres", "-d", "postgres", "-c", "select 40 + 2", "-c", "begin").CombinedOutput()
			if !strings.Contains(string(out), "42") || !strings.Contains(string(out), "FATAL:  transaction blocks not allowed in statement pooling mode") {
				t.Errorf("psql: %s", out)
			}
		})
	}
}
