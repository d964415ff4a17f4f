// Table tests of the normalizer: pgbench's and TPC-H's statements, every literal kind, lists, casts, minus signs.

package digest

import (
	"strings"
	"testing"

	"github.com/qpkit/qpkit/pkg/tpch"
)

type normCase struct {
	name, in, want string
}

func checkCases(t *testing.T, cases []normCase) {
	t.Helper()
	for _, c := range cases {
		got, fp := Normalize(c.in)
		if got != c.want {
			t.Errorf("%s: Normalize(%q)\n got  %q\n want %q", c.name, c.in, got, c.want)
			continue
		}
		if fp != Hash([]byte(got)) {
			t.Errorf("%s: fingerprint %x is not Hash of the text", c.name, fp)
		}
		if again, _ := Normalize(got); again != got {
			t.Errorf("%s: not idempotent: %q -> %q", c.name, got, again)
		}
	}
}

// pgbench's built-in tpcb-like script, as sent with -M simple (values
// substituted) and with -M extended/prepared ($n parameters).
var pgbenchSimple = []string{
	"BEGIN;",
	"UPDATE pgbench_accounts SET abalance = abalance + -4033 WHERE aid = 81714;",
	"SELECT abalance FROM pgbench_accounts WHERE aid = 81714;",
	"UPDATE pgbench_tellers SET tbalance = tbalance + -4033 WHERE tid = 7;",
	"UPDATE pgbench_branches SET bbalance = bbalance + -4033 WHERE bid = 1;",
	"INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (7, 1, 81714, -4033, CURRENT_TIMESTAMP);",
	"END;",
}

var pgbenchExtended = []string{
	"BEGIN;",
	"UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;",
	"SELECT abalance FROM pgbench_accounts WHERE aid = $1;",
	"UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2;",
	"UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2;",
	"INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP);",
	"END;",
}

var pgbenchWant = []string{
	"begin",
	"update pgbench_accounts set abalance = abalance + $1 where aid = $2",
	"select abalance from pgbench_accounts where aid = $1",
	"update pgbench_tellers set tbalance = tbalance + $1 where tid = $2",
	"update pgbench_branches set bbalance = bbalance + $1 where bid = $2",
	"insert into pgbench_history(tid, bid, aid, delta, mtime) values ($1, $2, $3, $4, current_timestamp)",
	"end",
}

func TestPgbench(t *testing.T) {
	for i := range pgbenchSimple {
		checkCases(t, []normCase{
			{"simple", pgbenchSimple[i], pgbenchWant[i]},
			{"extended", pgbenchExtended[i], pgbenchWant[i]},
		})
		if Fingerprint(pgbenchSimple[i]) != Fingerprint(pgbenchExtended[i]) {
			t.Errorf("statement %d: simple and extended forms differ in fingerprint", i)
		}
	}
}

func TestTPCHQ1(t *testing.T) {
	q, err := tpch.Query(1)
	if err != nil {
		t.Fatal(err)
	}
	checkCases(t, []normCase{{"Q1", q, "select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty, " +
		"sum(l_extendedprice) as sum_base_price, sum(l_extendedprice * ($1 - l_discount)) as sum_disc_price, " +
		"sum(l_extendedprice * ($2 - l_discount) * ($3 + l_tax)) as sum_charge, avg(l_quantity) as avg_qty, " +
		"avg(l_extendedprice) as avg_price, avg(l_discount) as avg_disc, count(*) as count_order " +
		"from lineitem where l_shipdate <= date $4 - interval $5 day " +
		"group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus"}})
}

// TestTPCH checks every TPC-H query: idempotent, no literal left, and the
// same fingerprint when reformatted and with other constants.
func TestTPCH(t *testing.T) {
	for n := 1; n <= tpch.NumQueries; n++ {
		q, err := tpch.Query(n)
		if err != nil {
			t.Fatal(err)
		}
		got, fp := Normalize(q)
		if strings.ContainsAny(got, "'\n\t") || strings.Contains(got, "  ") {
			t.Errorf("Q%d: a literal or unfolded whitespace is left: %q", n, got)
		}
		if again, _ := Normalize(got); again != got {
			t.Errorf("Q%d: not idempotent:\n%q\n%q", n, got, again)
		}
		reformatted := strings.ToUpper(strings.Join(strings.Fields(q), "\n  ")) + " -- comment"
		if _, fp2 := Normalize(reformatted); fp2 != fp {
			t.Errorf("Q%d: reformatting changed the fingerprint", n)
		}
	}
}

func TestLiterals(t *testing.T) {
	checkCases(t, []normCase{
		{"integer", "select 42", "select $1"},
		{"numeric", "select 4.2, .5, 5., 1e10, 1.5E-3, 2e+4", "select $1, $2, $3, $4, $5, $6"},
		{"non-decimal and underscores", "select 0x1F, 0o17, 0b101, 1_000_000", "select $1, $2, $3, $4"},
		{"string", "select 'str', 'it''s', ''", "select $1, $2, $3"},
		{"escape string", `select E'a\'b', e'\\', E'x''y'`, "select $1, $2, $3"},
		{"dollar-quoted", "select $$it's$$, $tag$ a $ b $x$ $$ $tag$, $a$$a$", "select $1, $2, $3"},
		{"bit strings", "select B'0101', X'1F', b'1', x'ff'", "select $1, $2, $3, $4"},
		{"national and unicode", `select N'nat', U&'d\0061t', u&'x' UESCAPE '!'`, "select $1, $2, $3 uescape $4"},
		{"continued string", "select 'a'\n  'b', 'c' 'd'", "select $1, $2 $3"},
		{"parameters renumbered in order", "select $3, $1, $22", "select $1, $2, $3"},
		{"typed literals", "select interval '1 day', date '2020-01-01', timestamp with time zone '2020-01-01'",
			"select interval $1, date $2, timestamp with time zone $3"},
		{"booleans and null are constants", "select true, FALSE, Null", "select $1, $2, $3"},
		{"but not after is, not and set", "select a is not true, b is null, c is false from t; create table u (a int not null references t on delete set null)", "select a is not true, b is null, c is false from t; create table u(a int not null references t on delete set null)"},
		{"in lists of booleans", "select 1 where a in (true, false) and b in (null)", "select $1 where a in ($2) and b in ($3)"},
		{"unterminated string", "select 'abc", "select $1"},
		{"unterminated dollar quote", "select $q$abc", "select $1"},
	})
}

func TestComments(t *testing.T) {
	checkCases(t, []normCase{
		{"line", "select 1 -- one\n, 2 --two", "select $1, $2"},
		{"block without spaces", "select/*x*/1", "select $1"},
		{"nested block", "select /* a /* nested */ still */ 1", "select $1"},
		{"only comments", "  -- nothing\n/* here */", ""},
		{"comment inside an operator", "select a+/*c*/1, a--c\n-1", "select a + $1, a - $2"},
	})
}

func TestWhitespaceAndCase(t *testing.T) {
	checkCases(t, []normCase{
		{"folded", "SELECT  *\n\tFROM T\r\nWHERE a=1", "select * from t where a = $1"},
		{"quoted identifiers kept", `SELECT "MyCol", MyCol FROM "Sch"."T" WHERE "a""b" = 1`, `select "MyCol", mycol from "Sch"."T" where "a""b" = $1`},
		{"unicode identifier", `select U&"d\0061t", Größe`, `select U&"d\0061t", größe`},
		{"calls and qualified names", "SELECT COUNT ( * ), t . * , s.t.c FROM t", "select count(*), t.*, s.t.c from t"},
		{"subscripts", "select a[1], a [1:2] from t", "select a[$1], a[$2 : $3] from t"},
		{"trailing semicolons", "select 1 ;; ", "select $1"},
		{"two statements", "select 1; select 2;", "select $1; select $2"},
		{"empty", "", ""},
		{"semicolon only", ";", ""},
		{"lone and tag-like dollars", "select $ , $abc, a$b, $1abc", "select $, $ abc, a$b, $1 abc"},
	})
	if Fingerprint("select * from t where a = 1") != Fingerprint("SELECT *\nFROM t\nWHERE a=99;") {
		t.Error("spacing, case, constants or a trailing ; changed the fingerprint")
	}
	if Fingerprint(`select * from "T"`) == Fingerprint("select * from t") {
		t.Error(`"T" and t have the same fingerprint`)
	}
}

func TestLists(t *testing.T) {
	checkCases(t, []normCase{
		{"in", "select * from t where a in (1, 2, 3)", "select * from t where a in ($1)"},
		{"not in strings", "select * from t where a not in ('a', 'b')", "select * from t where a not in ($1)"},
		{"in parameters", "select * from t where a in ($1, $2, $3) and b = $4", "select * from t where a in ($1) and b = $2"},
		{"in casts", "select * from t where a in ('a'::text, 'b'::character varying)", "select * from t where a in ($1)"},
		{"in subquery", "select * from t where a in (select x from u where y in (1, 2))", "select * from t where a in (select x from u where y in ($1))"},
		{"in with a column", "select * from t where a in (1, b)", "select * from t where a in ($1, b)"},
		{"in with rows", "select * from t where (a, b) in ((1, 2), (3, 4))", "select * from t where (a, b) in (($1, $2), ($3, $4))"},
		{"array", "select * from t where a = any(array[1, 2, 3]) and b = 4", "select * from t where a = any(array[$1]) and b = $2"},
		{"any parameter", "select * from t where id = any($1)", "select * from t where id = any($1)"},
		{"one row", "insert into t values (1, 2)", "insert into t values ($1, $2)"},
		{"rows of constants", "INSERT INTO t VALUES (1, 'a'), (2, 'b'),(3, 'c') RETURNING id", "insert into t values ($1, $2) returning id"},
		{"rows of parameters", "insert into t values ($1, $2::int), ($3, $4::int)", "insert into t values ($1, $2::int)"},
		{"rows in a subquery", "select * from (values (1, 'a'), (2, 'b')) v(x, y)", "select * from (values ($1, $2)) v(x, y)"},
		{"rows stop at another width", "insert into t values (1, 2), (3, 4), (5), (6, 7)", "insert into t values ($1, $2), ($3), ($4, $5)"},
		{"rows stop at an expression", "insert into t values (1, 2), (3, now()), (4, 5)", "insert into t values ($1, $2), ($3, now()), ($4, $5)"},
		{"first row not constant", "insert into t values (default, 1), (default, 2)", "insert into t values (default, $1), (default, $2)"},
	})
	if Fingerprint("select * from t where a in (1)") != Fingerprint("select * from t where a in (1, 2, 3, 4, 5, 6)") {
		t.Error("lists of different lengths have different fingerprints")
	}
	if Fingerprint("insert into t values (1, 2)") != Fingerprint("insert into t values (1, 2), (3, 4), (5, 6)") {
		t.Error("VALUES lists of different lengths have different fingerprints")
	}
}

func TestCasts(t *testing.T) {
	checkCases(t, []normCase{
		{"postfix", "select '1'::int, '{1,2}'::int[], 1::text", "select $1::int, $2::int[], $3::text"},
		{"cast", "select CAST('1' AS int)", "select cast($1 as int)"},
		{"typmod", "select x::varchar(10)", "select x::varchar($1)"},
	})
}

func TestMinus(t *testing.T) {
	checkCases(t, []normCase{
		{"subtraction", "select a-1, a - 1, t.a-1, (a)-1, 2-1, $1-1", "select a - $1, a - $2, t.a - $3, (a) - $4, $5 - $6, $7 - $8"},
		{"negative constants", "select -1, - 1, f(-1), a = -1, a - -1, a+-1, a<=-1, a<-1", "select $1, $2, f($3), a = $4, a - $5, a + $6, a <= $7, a < $8"},
		{"after keywords", "select * from t where a between -1 and -2 limit -1", "select * from t where a between $1 and $2 limit $3"},
		{"negated column stays", "select -x, - $1 from t", "select - x, - $1 from t"},
		// "||-" is one operator: it has a | so its trailing - is not split off.
		{"operators", "select a @> '{1}', a->>'x', a !~~* 'p', a|| -1, a||-1", "select a @> $1, a ->> $2, a !~~* $3, a || $4, a ||- $5"},
	})
}

func TestPositions(t *testing.T) {
	checkCases(t, []normCase{
		{"group and order by positions", "select a, count(*) from t group by 1 order by 2 desc, a, 1 limit 10 offset 5",
			"select a, count(*) from t group by 1 order by 2 desc, a, 1 limit $1 offset $2"},
		{"expression after order by", "select a from t order by a + 1", "select a from t order by a + $1"},
		{"by list ends", "select a from t group by 1 having count(*) > 1", "select a from t group by 1 having count(*) > $1"},
	})
}

func TestAppendReusesBuffer(t *testing.T) {
	buf := []byte("prefix:")
	out, fp := Append(buf, "SELECT 1")
	if string(out) != "prefix:select $1" {
		t.Fatalf("Append = %q", out)
	}
	if fp != Hash([]byte("select $1")) {
		t.Fatal("Append's fingerprint covers the prefix")
	}
}

// PostgreSQL's lexer (scan.l, quotecontinue) joins two string constants
// separated by whitespace with a newline, where that whitespace may hold
// -- comments: 'a' -- note<newline> 'b' is the one constant 'ab'. The
// normalizer accepts only blanks there, so the commented form is a
// second shape ("$1 $2") of the same statement.
func TestContinuationAcrossLineComment(t *testing.T) {
	plain := Fingerprint("select 'a'\n'b'")
	for _, q := range []string{"select 'a' -- note\n'b'", "select 'a'\n-- note\n'b'"} {
		if got, _ := Normalize(q); Fingerprint(q) != plain {
			t.Errorf("Normalize(%q) = %q: not the shape of the same literal without the comment (select $1)", q, got)
		}
	}
	if got, _ := Normalize("select 'a' /* c */\n'b'"); got != "select $1 $2" {
		t.Errorf("a block comment between two constants: %q, want select $1 $2", got)
	}
}
