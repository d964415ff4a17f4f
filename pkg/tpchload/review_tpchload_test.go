package tpchload

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

func rvDuckTables(t *testing.T, duck *sql.DB) []string {
	t.Helper()
	rows, err := duck.Query("select table_name from information_schema.tables order by 1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// LoadDuckDB pastes its temporary CSV path into the read_csv literal
// unescaped, so a TMPDIR holding a quote (a user's home such as
// /home/o'brien/tmp) breaks every load, leaving an empty nation table.
func TestLoadReviewDuckTempDirQuote(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "o'brien")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", dir)
	duck, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer duck.Close()
	if err := LoadDuckDB(context.Background(), duck, 0.001); err != nil {
		t.Errorf("TMPDIR %q: LoadDuckDB: %v (tables left: %v)", dir, err, rvDuckTables(t, duck))
	}
}

// A DuckDB database that already holds a table named orders: the load must
// fail (the tables must not exist yet) and leave the database as it was,
// as LoadPostgres does (its schema is one implicit transaction).
func TestLoadReviewDuckExistingTableLeavesHalfLoad(t *testing.T) {
	ctx := context.Background()
	url := rvNewDB(t, "zzload_existing")
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE orders (id int)"); err != nil {
		t.Fatal(err)
	}
	pgErr := LoadPostgres(ctx, url, 0.001, false)
	var pgTables int
	if err := conn.QueryRow(ctx, "select count(*) from pg_tables where schemaname = 'public'").Scan(&pgTables); err != nil {
		t.Fatal(err)
	}
	t.Logf("postgres: err %v; tables after: %d (only the user's orders)", pgErr, pgTables)

	duck, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer duck.Close()
	if _, err := duck.Exec("CREATE TABLE orders (id int)"); err != nil {
		t.Fatal(err)
	}
	err = LoadDuckDB(ctx, duck, 0.001)
	if err == nil {
		t.Fatal("LoadDuckDB over an existing orders table succeeded")
	}
	if got := rvDuckTables(t, duck); len(got) != 1 {
		t.Errorf("LoadDuckDB failed (%v) but left tables %v behind; want only the existing [orders]", err, got)
	}
}

// A load that fails part way (here: cancelled once nation is loaded and lineitem is streaming)
// must not leave half-loaded TPC-H tables that block the next load
// ("the tables must not exist yet").
func TestLoadReviewPostgresCancelLeavesHalfLoad(t *testing.T) {
	url := rvNewDB(t, "zzload_cancel")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- LoadPostgres(lctx, url, 0.1, true) }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var ok bool
		if err := conn.QueryRow(ctx, "select to_regclass('public.nation') is not null and exists (select from pg_stat_activity where query like 'COPY lineitem%' and state = 'active')").Scan(&ok); err != nil {
			t.Fatal(err)
		}
		if ok {
			var n int
			if err := conn.QueryRow(ctx, "select count(*) from nation").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("schema never appeared")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	lerr := <-done
	if lerr == nil {
		t.Skip("load finished before the cancel")
	}
	var n int
	if err := conn.QueryRow(ctx, "select count(*) from pg_tables where schemaname = 'public'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	var rows int64
	conn.QueryRow(ctx, "select (select count(*) from nation) + (select count(*) from lineitem)").Scan(&rows)
	if n != 0 {
		t.Errorf("LoadPostgres failed (%v) but left %d TPC-H tables behind (nation+lineitem rows %d: some tables loaded, the rest empty); a retry fails with %q",
			lerr, n, rows, rvRetry(url))
	}
}

func rvRetry(url string) string {
	err := LoadPostgres(context.Background(), url, 0.001, false)
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func rvNewDB(t *testing.T, name string) string {
	t.Helper()
	ctx := context.Background()
	pg := pgtest.Shared(t)
	conn, err := pgx.Connect(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return pg.DBURL(name)
}

// The same for DuckDB: a load cancelled once nation holds rows drops the
// tables it created, so the next load can run.
func TestLoadReviewDuckCancelLeavesNothing(t *testing.T) {
	duck, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer duck.Close()
	lctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- LoadDuckDB(lctx, duck, 0.1) }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var n int
		if duck.QueryRow("select count(*) from nation").Scan(&n) == nil && n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("nation never got rows")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	lerr := <-done
	if lerr == nil {
		t.Skip("load finished before the cancel")
	}
	if got := rvDuckTables(t, duck); len(got) != 0 {
		t.Errorf("LoadDuckDB failed (%v) but left tables %v behind", lerr, got)
	}
	if err := LoadDuckDB(context.Background(), duck, 0.001); err != nil {
		t.Errorf("a load after the failed one: %v", err)
	}
}
