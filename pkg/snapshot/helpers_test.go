package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

var dbSeq atomic.Int64

// newSource creates a fresh database on the shared cluster, runs setup in
// it and returns its URL.
func newSource(t *testing.T, setup string) string {
	t.Helper()
	ctx := context.Background()
	c := pgtest.Shared(t)
	name := fmt.Sprintf("snap%d", dbSeq.Add(1))
	admin, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	url := c.DBURL(name)
	if setup != "" {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if err := conn.PgConn().Exec(ctx, setup).Close(); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
	return url
}

// openCopy opens a DuckDB file; it is closed when the test ends.
func openCopy(t *testing.T, path string) *sql.DB {
	t.Helper()
	connector, err := duckdb.NewConnector(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close(); connector.Close() })
	return db
}

// queryInt runs a one-number query.
func queryInt(t *testing.T, db *sql.DB, q string) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// pgInt runs a one-number query in PostgreSQL.
func pgInt(t *testing.T, url, q string) int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// dirNames lists a directory's entries.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// target is a fresh target path in a temporary directory.
func target(t *testing.T) string { return filepath.Join(t.TempDir(), "copy.duckdb") }

// mustConfig parses a connection URL.
func mustConfig(t *testing.T, url string) *pgx.ConnConfig {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
