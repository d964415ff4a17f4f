package copybin_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/snapshot"
)

var rvcSeq atomic.Int64

// rvcSourceDB creates a fresh database (create gives the CREATE DATABASE
// options) on the shared cluster, runs setup in it as the superuser and
// returns its name.
func rvcSourceDB(t *testing.T, create, setup string) string {
	t.Helper()
	ctx := context.Background()
	c := pgtest.Shared(t)
	name := fmt.Sprintf("zzc2_%d_%d", time.Now().UnixNano()%1e9, rvcSeq.Add(1))
	admin, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" "+create); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a, err := pgx.Connect(context.Background(), c.URL())
		if err == nil {
			a.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			a.Close(context.Background())
		}
	})
	conn, err := pgx.Connect(ctx, c.DBURL(name)+"&client_encoding=UTF8") // setup's literals are UTF-8
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.PgConn().Exec(ctx, setup).Close(); err != nil {
		t.Fatalf("setup: %v", err)
	}
	return name
}

func rvcOpenCopy(t *testing.T, path string) *sql.DB {
	t.Helper()
	connector, err := duckdb.NewConnector(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close(); connector.Close() })
	return db
}

// TestCopy2ReviewSnapshotRowSecurity: a table with row-level security, read by
// a role the policy applies to. PostgreSQL turns COPY into a filtered
// SELECT, so the snapshot silently holds only the rows the policy shows,
// and Verify (whose checksum query is filtered the same way) says it
// matches. pg_dump sets row_security = off so that such a read fails
// ("query would be affected by row-level security policy") instead of
// dumping part of a table; the snapshot must either fail the same way or
// copy every row.
func TestCopy2ReviewSnapshotRowSecurity(t *testing.T) {
	ctx := context.Background()
	db := rvcSourceDB(t, "", `
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'zzc2_reader') THEN CREATE ROLE zzc2_reader LOGIN; END IF;
END $$;
CREATE TABLE accounts (id int PRIMARY KEY, owner text NOT NULL, balance numeric(12,2) NOT NULL);
INSERT INTO accounts SELECT g, CASE WHEN g % 10 = 0 THEN 'zzc2_reader' ELSE 'other' END, g * 1.25 FROM generate_series(1, 1000) g;
ALTER TABLE accounts ENABLE ROW LEVEL SECURITY;
CREATE POLICY own ON accounts FOR SELECT USING (owner = current_user);
GRANT SELECT ON accounts TO zzc2_reader;`)
	c := pgtest.Shared(t)
	url := strings.Replace(c.DBURL(db), "postgres://postgres@", "postgres://zzc2_reader@", 1)
	for _, strat := range []snapshot.Strategy{snapshot.Appender, snapshot.Parquet} {
		tgt := filepath.Join(t.TempDir(), "copy.duckdb")
		_, err := snapshot.Run(ctx, snapshot.Options{SourceURL: url, Tables: []string{"accounts"}, Target: tgt,
			Strategy: strat, Readers: 2, Writers: 1, Verify: true})
		if err != nil {
			// As pg_dump: row_security off makes the read fail, naming the policy.
			if !strings.Contains(err.Error(), "row-level security") {
				t.Errorf("%s: the snapshot failed, but not for row-level security: %v", strat, err)
			}
			continue
		}
		var n int64
		if err := rvcOpenCopy(t, tgt).QueryRow("SELECT count(*) FROM public.accounts").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1000 {
			t.Errorf("%s: the snapshot (verified) holds %d of the table's 1000 rows: row-level security filtered the copy without a word", strat, n)
		}
	}
}

// TestCopy2ReviewLatin1Source: the snapshot's sessions (pgx) leave
// client_encoding at the database's default, so in a LATIN1 database the
// binary COPY sends text in LATIN1, not UTF-8. copybin takes those bytes
// as UTF-8: a LATIN1 text whose bytes happen to form UTF-8 ('Ã©' is C3 A9)
// is silently copied as another string ('é', one character instead of
// two), and Verify agrees (both sides hash the same bytes); any other
// accented text ('café', E9) fails the whole snapshot as "not valid UTF-8".
// With client_encoding UTF8 the server converts every value exactly.
func TestCopy2ReviewLatin1Source(t *testing.T) {
	ctx := context.Background()
	db := rvcSourceDB(t, "ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0", `
CREATE TABLE looks_utf8 (id int PRIMARY KEY, s text, c char(4), v varchar(10)[]);
INSERT INTO looks_utf8 VALUES (1, 'Ã©', 'Ã©', '{Ã©}'), (2, 'plain', 'ab', '{x}');
CREATE TABLE accented (id int PRIMARY KEY, s text);
INSERT INTO accented VALUES (1, 'café'), (2, 'Ünïcödé');`)
	url := pgtest.Shared(t).DBURL(db)
	tgt := filepath.Join(t.TempDir(), "copy.duckdb")
	if _, err := snapshot.Run(ctx, snapshot.Options{SourceURL: url, Tables: []string{"looks_utf8"}, Target: tgt,
		Readers: 1, Writers: 1, Verify: true}); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	var got string
	if err := rvcOpenCopy(t, tgt).QueryRow("SELECT s || '|' || c || '|' || v[1] || '|' || length(s)::VARCHAR FROM public.looks_utf8 WHERE id = 1").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := "Ã©|Ã©|Ã©|2"; got != want {
		t.Errorf("LATIN1 text 'Ã©' (2 characters in PostgreSQL, length(s) = 2): the copy holds %q, want %q", got, want)
	}
	tgt2 := filepath.Join(t.TempDir(), "copy2.duckdb")
	if _, err := snapshot.Run(ctx, snapshot.Options{SourceURL: url, Tables: []string{"accented"}, Target: tgt2,
		Readers: 1, Writers: 1}); err != nil {
		t.Errorf("snapshot of LATIN1 text 'café' fails: %v", err)
	}
}
