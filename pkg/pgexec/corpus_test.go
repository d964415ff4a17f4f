// Integration: the validator and the executor together run every accepted
// corpus statement, and nothing in the database changes.

package pgexec

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/safesql"
	"github.com/qpkit/qpkit/pkg/tpch"
)

type corpusStatement struct {
	SQL     string `json:"sql"`
	Verdict string `json:"verdict"`
	Why     string `json:"why"`
}

func readCorpus(t *testing.T) []corpusStatement {
	t.Helper()
	f, err := os.Open("../safesql/testdata/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusStatement
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for line := 1; sc.Scan(); line++ {
		var s corpusStatement
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("corpus.jsonl:%d: %v", line, err)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// loadTPCH creates the TPC-H schema with SF 0.01 data (at SF 0.001 dbgen itself repeats partsupp keys) so that the corpus's
// analytic queries run against real rows.
func loadTPCH(t *testing.T, ctx context.Context, conn *pgx.Conn) {
	t.Helper()
	if _, err := conn.Exec(ctx, tpch.SchemaSQL); err != nil {
		t.Fatalf("schema: %v", err)
	}
	g, err := tpch.NewGenerator(0.01)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tpch.Tables {
		pr, pw := io.Pipe()
		go func() {
			_, err := g.WriteTable(ctx, pw, tb, tpch.Options{Format: tpch.FormatCopy, Jobs: 1})
			pw.CloseWithError(err)
		}()
		if _, err := conn.PgConn().CopyFrom(ctx, pr, "COPY "+tb.String()+" FROM STDIN"); err != nil {
			t.Fatalf("load %s: %v", tb, err)
		}
	}
	if _, err := conn.Exec(ctx, tpch.ConstraintsSQL+"; ANALYZE"); err != nil {
		t.Fatalf("constraints: %v", err)
	}
}

// snapshot captures what an escaped statement could change: the canary's
// rows, the sequence, the catalog, large objects, advisory locks and the
// server's settings as a new session sees them.
func snapshot(t *testing.T, ctx context.Context, url string) string {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var s string
	err = conn.QueryRow(ctx, `select concat_ws(' | ',
		(select string_agg(id || ':' || v, ',' order by id) from canary),
		(select last_value || '/' || is_called from canary_seq),
		(select md5(string_agg(oid || relname || relkind::text || relowner, ',' order by oid)) from pg_class),
		(select md5(string_agg(oid || proname, ',' order by oid)) from pg_proc),
		(select md5(string_agg(oid || rolname || rolsuper::text, ',' order by oid)) from pg_roles),
		(select count(*) from pg_largeobject_metadata),
		(select count(*) from pg_locks where locktype = 'advisory'),
		(select md5(string_agg(name || '=' || setting, ',' order by name)) from pg_settings),
		(select md5(string_agg(datname, ',' order by oid)) from pg_database),
		(select sum(n_tup_ins + n_tup_upd + n_tup_del) from pg_stat_user_tables))`).Scan(&s)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	return s
}

func TestCorpusChangesNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	db := pgtest.Start(t, pgtest.Options{Settings: map[string]string{"track_counts": "on"}})
	conn, err := pgx.Connect(ctx, db.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	loadTPCH(t, ctx, conn)
	if _, err := conn.Exec(ctx, `
		create table canary (id int primary key, v text);
		insert into canary values (1, 'one'), (2, 'two'), (3, 'three');
		create sequence canary_seq;
		select nextval('canary_seq');
		create function myfn(int) returns int language sql immutable as 'select $1';
		analyze canary`); err != nil {
		t.Fatalf("canary: %v", err)
	}
	time.Sleep(600 * time.Millisecond) // let the statistics collector settle
	before := snapshot(t, ctx, db.URL())

	cfg, err := pgxpool.ParseConfig(db.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 2
	ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	v, err := safesql.New(safesql.Options{AllowFunctions: []string{"myfn"}})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := New(pool, v, Options{StatementTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}

	var ran, failed, refused int
	var failures []string
	for _, s := range readCorpus(t) {
		_, err := ex.Run(ctx, s.SQL, nil, nil)
		var r *safesql.Refusal
		switch {
		case s.Verdict == "refuse":
			if !errors.As(err, &r) {
				t.Errorf("%s: refused statement was not refused by Run: %v", s.Why, err)
			}
			refused++
		case errors.As(err, &r) && strings.Contains(r.Reason, "syntax and the server is"):
			refused++ // SQL/JSON of a newer release than this server (ServerVersion)
		case errors.As(err, &r):
			t.Errorf("%s: accepted statement refused by Run: %v", s.Why, err)
		case err != nil:
			failed++
			failures = append(failures, fmt.Sprintf("%s: %v", s.Why, err))
			if strings.HasPrefix(s.Why, "tpch/") {
				t.Errorf("%s failed: %v", s.Why, err)
			}
		default:
			ran++
		}
	}
	t.Logf("accepted statements: %d ran, %d failed in the database; %d refused", ran, failed, refused)
	for _, f := range failures {
		t.Logf("  failed: %s", f)
	}
	// Most accepted statements must really run, or this test proves little.
	if ran < 3*(ran+failed)/4 {
		t.Errorf("only %d of %d accepted statements ran without error", ran, ran+failed)
	}
	time.Sleep(600 * time.Millisecond)
	if after := snapshot(t, ctx, db.URL()); after != before {
		t.Errorf("the database changed:\nbefore %s\nafter  %s", before, after)
	}
}
