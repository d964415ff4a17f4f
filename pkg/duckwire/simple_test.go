package duckwire

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

func psqlBin(t *testing.T) string {
	for _, p := range []string{"/usr/lib/postgresql/15/bin/psql", "psql"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Skip("psql not installed")
	return ""
}

func runPsql(t *testing.T, url string, args ...string) string {
	t.Helper()
	cmd := exec.Command(psqlBin(t), append([]string{"-X", "-v", "ON_ERROR_STOP=1", url}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psql %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestPsqlSimpleQuery(t *testing.T) {
	s := startServer(t, nil)
	out := runPsql(t, s.url, "-A", "-t", "-c", "select count(*), sum(l_quantity) from lineitem; select 1 as one")
	if want := "1000|25000.00\n1\n"; out != want {
		t.Fatalf("got %q, want %q", out, want)
	}
}

func TestPgxSimpleProtocol(t *testing.T) {
	s := startServer(t, nil)
	c := connect(t, s.url, true)
	var n int64
	var q string
	if err := c.QueryRow(context.Background(), "select count(*), max(l_quantity)::text from lineitem where l_orderkey > $1", 10).Scan(&n, &q); err != nil {
		t.Fatal(err)
	}
	if n != 990 || q != "49.50" {
		t.Fatalf("got %d %s", n, q)
	}
	_, err := c.Exec(context.Background(), "insert into lineitem values (1, 1, 'x', current_date)")
	if err == nil || !strings.Contains(err.Error(), "25006") {
		t.Fatalf("insert: %v", err)
	}
}

func TestStartupOptions(t *testing.T) {
	s := startServer(t, nil)
	out := runPsql(t, s.url+"&options=-c%20statement_timeout%3D1234%20-c%20TimeZone%3DAsia/Tokyo", "-A", "-t",
		"-c", "show statement_timeout", "-c", "show timezone", "-c", "select tstz from types where i4 = 42")
	if want := "1234\nAsia/Tokyo\n2024-01-02 12:04:05.5+09\n"; out != want {
		t.Fatalf("got %q, want %q", out, want)
	}
}

func TestBadStartupTimeZone(t *testing.T) {
	s := startServer(t, nil)
	c, err := pgx.Connect(context.Background(), s.url+"&timezone=Nowhere/Special")
	if err == nil {
		c.Close(context.Background())
		t.Fatal("connected with an invalid TimeZone")
	}
	if !strings.Contains(err.Error(), "22023") || !strings.Contains(err.Error(), "TimeZone") {
		t.Fatalf("got %v, want 22023 about TimeZone", err)
	}
}

func TestPsqlDescribe(t *testing.T) {
	s := startServer(t, nil)
	out := runPsql(t, s.url, "-c", `\dt`)
	if !strings.Contains(out, "lineitem | table") || !strings.Contains(out, "types    | table") || strings.Contains(out, "snapshot") {
		t.Fatalf("\\dt:\n%s", out)
	}
	out = runPsql(t, s.url, "-c", `\d lineitem`)
	for _, want := range []string{`Table "main.lineitem"`, "l_orderkey | bigint", "not null", "l_quantity | numeric(15,2)", "l_shipdate | date"} {
		if !strings.Contains(out, want) {
			t.Fatalf("\\d lineitem lacks %q:\n%s", want, out)
		}
	}
	t.Log(out)
	out = runPsql(t, s.url, "-c", `\d+ types`, "-c", `\dn`, "-c", `\l`)
	for _, want := range []string{"tstz   | timestamp with time zone", "arr    | integer[]", " main ", "analytics | analyst"} {
		if !strings.Contains(out, want) {
			t.Fatalf("\\d+ types, \\dn, \\l lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, MetaSchema) {
		t.Fatalf("%s listed:\n%s", MetaSchema, out)
	}
	out = runPsql(t, s.url, "-c", `\dt line*`)
	if !strings.Contains(out, "lineitem") || strings.Contains(out, "types") {
		t.Fatalf("\\dt line*:\n%s", out)
	}
}

// TestSessionFunctionsAndHiddenMetaSchema runs without the dialect (which
// refuses system catalogs itself) to check the server's own rewrites.
func TestSessionFunctionsAndHiddenMetaSchema(t *testing.T) {
	s := startServer(t, func(c *Config) { c.Dialect = Passthrough })
	c := dialRaw(t, s.addr)
	c.send(&pgproto3.Query{String: "select current_database(), current_user, 'current_user', pg_is_in_recovery()"})
	expect(t, c.until('Z'), "T D(x,raw,current_user,f) C(SELECT 1) Z(I)")
	d := dialRaw(t, startServer(t, nil).addr) // and with the dialect
	d.send(&pgproto3.Query{String: "select current_database(), current_user, 'current_user', pg_is_in_recovery()"})
	expect(t, d.until('Z'), "T D(x,raw,current_user,f) C(SELECT 1) Z(I)")
	c.send(&pgproto3.Query{String: "select count(*) from information_schema.tables where table_name in ('snapshot', 'lineitem')"})
	expect(t, c.until('Z'), "T D(1) C(SELECT 1) Z(I)")
	c.send(&pgproto3.Query{String: "select n.nspname from pg_catalog.pg_namespace n where n.nspname like '%qp%'"})
	expect(t, c.until('Z'), "T C(SELECT 0) Z(I)")
	c.send(&pgproto3.Query{String: "select count(*) from pg_class c join pg_namespace on c.relnamespace = pg_namespace.oid where c.relname = 'snapshot'"})
	expect(t, c.until('Z'), "T D(0) C(SELECT 1) Z(I)")
	c.send(&pgproto3.Query{String: "select typname from pg_catalog.pg_type where oid = 23"})
	expect(t, c.until('Z'), "T D(int4) C(SELECT 1) Z(I)")
}

// TestCatalogLookups runs driver-style catalog lookups, which bypass the
// dialect, while a query mixing catalogs and data is still refused.
func TestCatalogLookups(t *testing.T) {
	s := startServer(t, nil)
	c := dialRaw(t, s.addr)
	c.send(&pgproto3.Parse{Query: "select t.typname from pg_catalog.pg_type t where t.oid = $1", ParameterOIDs: []uint32{26}},
		&pgproto3.Bind{Parameters: [][]byte{[]byte("1700")}}, &pgproto3.Execute{}, &pgproto3.Sync{})
	expect(t, c.until('Z'), "1 2 D(numeric) C(SELECT 1) Z(I)")
	c.send(&pgproto3.Query{String: "select count(*) from information_schema.tables where table_name in ('snapshot', 'lineitem')"})
	expect(t, c.until('Z'), "T D(1) C(SELECT 1) Z(I)")
	c.send(&pgproto3.Query{String: "select count(*) from pg_class c, lineitem l"})
	expect(t, c.until('Z'), "E(0A000) Z(I)")
}

func TestExplainShape(t *testing.T) {
	s := startServer(t, nil)
	for _, simple := range []bool{true, false} {
		c := connect(t, s.url, simple)
		rows, err := c.Query(context.Background(), "explain select l_comment from lineitem where l_orderkey > 5")
		if err != nil {
			t.Fatal(err)
		}
		n, seq := 0, false
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			n++
			seq = seq || strings.Contains(line, "lineitem")
		}
		if rows.Err() != nil || n < 3 || !seq || rows.FieldDescriptions()[0].Name != "QUERY PLAN" {
			t.Fatalf("simple=%v: %d lines, scan found %v, %v", simple, n, seq, rows.Err())
		}
		if tag := rows.CommandTag().String(); tag != "EXPLAIN" {
			t.Fatalf("tag %q", tag)
		}
	}
}
