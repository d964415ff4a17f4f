// Review of qpanalytics' local answers (catalog intercepts, session
// functions, COPY TO STDOUT options), 2026-12-05. Each test states the
// correct behaviour, measured against PostgreSQL 15 where it can be.

package duckwire

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// rvPublicDB is a DuckDB file laid out as snapshot.Run writes it: the
// tables of PostgreSQL's public schema in schema public, a view, and the
// metadata schema.
func rvPublicDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "copy.duckdb")
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE SCHEMA public`,
		`CREATE TABLE public.orders (o_id BIGINT NOT NULL, o_total DECIMAL(15,2))`,
		`INSERT INTO public.orders VALUES (1, 2.50)`,
		`CREATE VIEW public.big_orders AS SELECT o_id FROM public.orders WHERE o_total > 1`,
		`CREATE SCHEMA _qpanalytics`,
		`CREATE TABLE _qpanalytics.snapshot (taken_at TIMESTAMPTZ)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return path
}

// rvAsk sends one simple Query and summarizes the answer.
func rvAsk(c *rawClient, q string) string {
	c.send(&pgproto3.Query{String: q})
	return summarize(c.until('Z'))
}

// Any query whose text merely contains "pg_catalog.pg_index" (or
// pg_constraint, pg_trigger, ...) — in a string literal, in a comment, or
// a real query on that catalog — is answered with zero rows and a single
// column "?column?", without running it.
func TestLocalReviewCatalogInterceptBySubstring(t *testing.T) {
	p := dialBoth(t, nil)
	for _, q := range []string{
		`select 'pg_catalog.pg_index' as s`,
		"select 1 as x -- compare with pg_catalog.pg_trigger",
		// Not kept: a real query on one of those catalogs (select count(*)
		// from pg_catalog.pg_policy) is still answered with no rows, a
		// known difference (docs/qpanalytics-server.md, psql).
	} {
		qp, pg := p.both(&pgproto3.Query{String: q})
		sameAnswers(t, q, qp, pg)
	}
}

// version(), current_database(), current_user and current_setting() are
// replaced by bare literals, so their result column is named "?column?"
// instead of the function's name, as PostgreSQL names it (clients read
// these by name: select version() -> row["version"]).
func TestLocalReviewLocalAnswersKeepColumnNames(t *testing.T) {
	p := dialBoth(t, nil)
	for _, q := range []string{
		"select version()", "select current_database()", "select current_user",
		"select current_setting('TimeZone')", "select pg_is_in_recovery()",
	} {
		qp, pg := p.both(&pgproto3.Query{String: q})
		// the values differ (server version, database, user): compare the descriptions
		qp, pg = strings.SplitN(qp, " ", 2)[0], strings.SplitN(pg, " ", 2)[0]
		sameAnswers(t, q, qp, pg)
	}
}

// The session-function rewrite only knows '...' and "..." quoting: text
// inside dollar-quoted strings, or after an apostrophe in a -- comment, is
// rewritten as if it were SQL, changing string literals.
func TestLocalReviewRewriteLeavesLiteralsAlone(t *testing.T) {
	p := dialBoth(t, nil)
	for _, q := range []string{
		"select $$version()$$ as v",
		"select $q$current_database()$q$ as v",
		"-- the user's name\nselect 'current_user' as v",
	} {
		qp, pg := p.both(&pgproto3.Query{String: q})
		sameAnswers(t, q, qp, pg)
	}
}

// current_setting(name, true) returns NULL for a setting that does not
// exist (the missing_ok form, used for application settings such as
// app.tenant); qpanalytics refuses it with 0A000.
func TestLocalReviewCurrentSettingMissingOK(t *testing.T) {
	p := dialBoth(t, nil)
	for _, q := range []string{
		"select current_setting('app.tenant', true) as v",
		"select coalesce(current_setting('app.tenant', true), 'none') as v",
	} {
		qp, pg := p.both(&pgproto3.Query{String: q})
		sameAnswers(t, q, qp, pg)
	}
}

// In a snapshot file the tables live in schema public, which the server
// puts first on DuckDB's search path (search_path shows "$user", public),
// so unqualified names resolve there; current_schema() must then say
// public, as PostgreSQL does, not DuckDB's "main" (tools list the tables of
// current_schema()). The SQL-standard spelling without parentheses must
// work too.
func TestLocalReviewCurrentSchemaIsPublic(t *testing.T) {
	path := rvPublicDB(t)
	s := startServer(t, func(c *Config) { c.Database = path })
	c := dialWith(t, s.addr, map[string]string{"user": "raw", "database": "x"})
	if got := rvAsk(c, "select count(*) as n from orders"); got != "T(n) D(1) C(SELECT 1) Z(I)" {
		t.Fatalf("unqualified table: %s", got)
	}
	for _, q := range []string{"select current_schema() as s", "select current_schema as s"} {
		if got, want := rvAsk(c, q), "T(s) D(public) C(SELECT 1) Z(I)"; got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}
}

// COPY options PostgreSQL refuses because the output would be ambiguous
// or the command is malformed are accepted: a NULL string holding the
// delimiter (a NULL then reads back as two fields), a CSV NULL string
// holding the quote, FORMAT given twice, HEADER yes.
func TestLocalReviewCopyOptionChecks(t *testing.T) {
	p := dialBoth(t, nil)
	for _, q := range []string{
		"copy (select null::text as a, 'b' as b) to stdout (delimiter ',', null 'x,y')",
		`copy (select null::text as a) to stdout (format csv, null 'a"b')`,
		"copy (select 'a' as x) to stdout (format csv, format text)",
		"copy (select 'a' as x) to stdout (header yes)",
	} {
		qp, pg := p.both(&pgproto3.Query{String: q})
		sameAnswers(t, q, qp, pg)
	}
}

// psql's \dn PATTERN and \l PATTERN add a name filter that the local
// answers ignore: every schema (and the database) is listed whatever the
// pattern. These are psql 15's queries for \dn nomatch and \l nomatch.
func TestLocalReviewPsqlPatternsFilter(t *testing.T) {
	s := startServer(t, nil)
	c := dialWith(t, s.addr, map[string]string{"user": "raw", "database": "x"})
	dn := `SELECT n.nspname AS "Name",
  pg_catalog.pg_get_userbyid(n.nspowner) AS "Owner"
FROM pg_catalog.pg_namespace n
WHERE n.nspname OPERATOR(pg_catalog.~) '^(nomatch)$' COLLATE pg_catalog.default
ORDER BY 1;`
	if got, want := rvAsk(c, dn), "T(Name,Owner) C(SELECT 0) Z(I)"; got != want {
		t.Errorf(`\dn nomatch: %s, want %s`, got, want)
	}
	l := `SELECT d.datname as "Name",
       pg_catalog.pg_get_userbyid(d.datdba) as "Owner",
       pg_catalog.pg_encoding_to_char(d.encoding) as "Encoding",
       d.datcollate as "Collate",
       d.datctype as "Ctype",
       d.daticulocale as "ICU Locale",
       CASE d.datlocprovider WHEN 'c' THEN 'libc' WHEN 'i' THEN 'icu' END AS "Locale Provider",
       pg_catalog.array_to_string(d.datacl, E'\n') AS "Access privileges"
FROM pg_catalog.pg_database d
WHERE d.datname OPERATOR(pg_catalog.~) '^(nomatch)$' COLLATE pg_catalog.default
ORDER BY 1;`
	if got := rvAsk(c, l); !strings.HasSuffix(got, "C(SELECT 0) Z(I)") {
		t.Errorf(`\l nomatch: %s, want no rows`, got)
	}
}

// \d+ on a view (documented: "\d name, \d+ name") ends with psql's
// pg_get_viewdef query, which is not answered locally and fails, so psql
// prints an error instead of the view.
func TestLocalReviewPsqlDescribeViewPlus(t *testing.T) {
	path := rvPublicDB(t)
	s := startServer(t, func(c *Config) { c.Database = path })
	c := dialWith(t, s.addr, map[string]string{"user": "raw", "database": "x"})
	find := rvAsk(c, `SELECT c.oid,
  n.nspname,
  c.relname
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname OPERATOR(pg_catalog.~) '^(big_orders)$' COLLATE pg_catalog.default
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 2, 3;`)
	start := strings.Index(find, "D(")
	if start < 0 {
		t.Fatalf("\\d big_orders found nothing: %s", find)
	}
	oid := strings.SplitN(find[start+2:], ",", 2)[0]
	got := rvAsk(c, "SELECT pg_catalog.pg_get_viewdef('"+oid+"'::pg_catalog.oid, true);")
	if strings.Contains(got, "E(") {
		t.Errorf("\\d+ big_orders: pg_get_viewdef answered %s, want one row with the view's definition", got)
	}
}
