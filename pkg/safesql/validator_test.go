// Tests: the statement corpus, input hygiene, options and the cache.

package safesql

import (
	"bufio"
	"encoding/json"
	"errors"
	"github.com/qpkit/qpkit/pkg/tpch"
	"os"
	"strings"
	"sync"
	"testing"
)

type corpusEntry struct {
	SQL     string `json:"sql"`
	Verdict string `json:"verdict"`
	Why     string `json:"why"`
}

func readCorpus(tb testing.TB) []corpusEntry {
	tb.Helper()
	f, err := os.Open("testdata/corpus.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		var e corpusEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			tb.Fatalf("corpus.jsonl:%d: %v", line, err)
		}
		if e.Verdict != "allow" && e.Verdict != "refuse" {
			tb.Fatalf("corpus.jsonl:%d: bad verdict %q", line, e.Verdict)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

func corpusValidator(tb testing.TB) *Validator {
	v, err := New(Options{AllowFunctions: []string{"myfn"}, ServerVersion: 170000})
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func TestCorpus(t *testing.T) {
	corpus := readCorpus(t)
	if len(corpus) < 150 {
		t.Errorf("corpus has %d statements, want at least 150", len(corpus))
	}
	v := corpusValidator(t)
	for i, e := range corpus {
		err := v.Validate(e.SQL)
		short := e.SQL
		if len(short) > 80 {
			short = short[:80] + "..."
		}
		switch {
		case e.Verdict == "allow" && err != nil:
			t.Errorf("line %d (%s) %q: refused: %v", i+1, e.Why, short, err)
		case e.Verdict == "refuse" && err == nil:
			t.Errorf("line %d (%s) %q: allowed, want refused", i+1, e.Why, short)
		case err != nil:
			var r *Refusal
			if !errors.As(err, &r) {
				t.Errorf("line %d: error %T is not a *Refusal", i+1, err)
				continue
			}
			if r.Reason == "" || r.Construct == "" {
				t.Errorf("line %d: empty Reason or Construct: %+v", i+1, r)
			}
			if r.Position < -1 || r.Position >= len(e.SQL) || (r.Position == -1 && strings.TrimSpace(e.SQL) != "" && r.Construct != "empty") {
				t.Errorf("line %d (%s): position %d outside the text of %d bytes (%v)", i+1, e.Why, r.Position, len(e.SQL), r)
			}
			if strings.Contains(r.Error(), "\n") {
				t.Errorf("line %d: Error() has a newline: %q", i+1, r.Error())
			}
		}
	}
}

// TestTPCH checks the 22 one-statement TPC-H queries from pkg/tpch (what tpchgen queries prints).
func TestTPCH(t *testing.T) {
	v := corpusValidator(t)
	for i := 1; i <= 22; i++ {
		q, err := tpch.Query(i)
		if err != nil {
			t.Fatal(err)
		}
		kind, r := v.Check(string(q))
		if r != nil || kind != KindSelect {
			t.Errorf("q%d: kind %q, %v", i, kind, r)
		}
	}
}

func refusal(t *testing.T, v *Validator, sql string) *Refusal {
	t.Helper()
	err := v.Validate(sql)
	var r *Refusal
	if !errors.As(err, &r) {
		t.Fatalf("%.60q: got %v, want a *Refusal", sql, err)
	}
	return r
}

func TestPositions(t *testing.T) {
	v := corpusValidator(t)
	for _, c := range []struct {
		sql       string
		pos       int
		construct string
	}{
		{"SELECT pg_sleep(1)", 7, "pg_sleep"},
		{"SELECT 1, pg_catalog.pg_sleep(1)", 10, "pg_catalog.pg_sleep"},
		{"SELECT 1; SELECT 2", 10, "multiple statements"},
		{"SELECT 1;\n  DROP TABLE t", 12, "multiple statements"},
		{"SELECT 'a\x00'", 9, "nul byte"},
		{"SELECT U&\"pg\\005fsleep\"(1)", 7, "pg_sleep"},
		{"WITH x AS (DELETE FROM t RETURNING 1) SELECT 1", 5, "DeleteStmt"},
		{"EXPLAIN ANALYZE SELECT 1", 8, "EXPLAIN ANALYZE"},
		{"SELECT é, pg_sleep(1)", 11, "pg_sleep"},
		{"SELECT é FROM", 13, "syntax"},
	} {
		r := refusal(t, v, c.sql)
		if r.Position != c.pos || r.Construct != c.construct {
			t.Errorf("%q: position %d construct %q, want %d %q (%v)", c.sql, r.Position, r.Construct, c.pos, c.construct, r)
		}
	}
}

func TestRefusalError(t *testing.T) {
	r := &Refusal{Reason: "function pg_sleep is not allowed", Construct: "pg_sleep", Position: 7}
	if got, want := r.Error(), "refused at offset 7: function pg_sleep is not allowed"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	r.Position = -1
	if got, want := r.Error(), "refused: function pg_sleep is not allowed"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// TestDeepInput feeds inputs that make libpg_query fail or overflow its C
// stack; each must come back as a refusal, never a crash.
func TestDeepInput(t *testing.T) {
	v, err := New(Options{MaxLength: 1 << 20, MaxDepth: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for name, sql := range map[string]string{
		"parens 100000": "SELECT " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000),
		"plus 100000":   "SELECT 1" + strings.Repeat("+1", 100000),
		"cast 50000":    "SELECT 1" + strings.Repeat("::int", 50000),
		"union 30000":   "SELECT 1" + strings.Repeat(" UNION SELECT 1", 30000),
		"not 50000":     "SELECT " + strings.Repeat("NOT ", 50000) + "true",
		"case 30000":    "SELECT " + strings.Repeat("CASE WHEN true THEN ", 30000) + "1" + strings.Repeat(" END", 30000),
		"concat 100000": "SELECT 'a'" + strings.Repeat("||'a'", 100000),
		"join 20000":    "SELECT 1 FROM t" + strings.Repeat(" JOIN t ON true", 20000),
		"is null 30000": "SELECT 1" + strings.Repeat(" IS NULL", 30000),
		"collate 30000": "SELECT 'a'" + strings.Repeat(" COLLATE \"C\"", 30000),
	} {
		r := refusal(t, v, sql)
		t.Logf("%s: %v", name, r)
	}
	// These are within the limits: they may pass, they must not crash.
	_ = v.Validate("SELECT a" + strings.Repeat("[1]", 30000))
	_ = v.Validate("SELECT " + strings.Repeat("(SELECT ", 999) + "1" + strings.Repeat(")", 999))
	_ = v.Validate("SELECT " + strings.Repeat("abs(", 999) + "1" + strings.Repeat(")", 999))
	_ = v.Validate("SELECT 1" + strings.Repeat("+1", 2047))
	// With default options the 100000-deep parens stop before the parser.
	d := corpusValidator(t)
	r := refusal(t, d, strings.Repeat("(", 100000))
	if r.Construct != "length" && r.Construct != "nesting depth" {
		t.Errorf("got %v", r)
	}
}

func TestHygieneLexer(t *testing.T) {
	v := corpusValidator(t)
	deep := strings.Repeat("(", 100) + strings.Repeat(")", 100)
	// Brackets inside literals, quoted identifiers and comments do not count.
	for _, sql := range []string{
		"SELECT '" + deep + "'",
		"SELECT E'\\'" + deep + "'",
		"SELECT $x$" + deep + "$x$",
		"SELECT 1 AS \"" + deep + "\"",
		"SELECT 1 -- " + deep,
		"SELECT 1 /* /* " + deep + " */ */",
		"SELECT U&'" + deep + "'",
		"SELECT '" + strings.Repeat("+", 5000) + "'",
	} {
		if err := v.Validate(sql); err != nil {
			t.Errorf("%.40q: %v", sql, err)
		}
	}
	// An E string ends at an unescaped quote: the brackets after it count.
	if r := refusal(t, v, "SELECT E'\\\\', "+deep); r.Construct != "nesting depth" {
		t.Errorf("got %v", r)
	}
	if r := refusal(t, v, "SELECT 1 + "+deep+"1"); r.Construct != "nesting depth" {
		t.Errorf("got %v", r)
	}
	// A -- comment ends at a carriage return too, as in PostgreSQL's
	// lexer: what follows it counts.
	if r := refusal(t, v, "SELECT 1 --\r+ "+deep+"1"); r.Construct != "nesting depth" {
		t.Errorf("after --\\r: got %v", r)
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []Options{
		{MaxDepth: 5000}, {MaxLength: -1}, {AllowFunctions: []string{"a.b.c"}}, {AllowFunctions: []string{""}}, {AllowFunctions: []string{".x"}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
	v, err := New(Options{AllowExplainAnalyze: true, AllowFunctions: []string{"myschema.safe_fn", "pg_catalog.pg_sleep"}, MaxLength: 30, MaxDepth: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{"EXPLAIN ANALYZE SELECT 1", "SELECT myschema.safe_fn()", "SELECT pg_catalog.pg_sleep(1)", "SELECT ((1))"} {
		if err := v.Validate(sql); err != nil {
			t.Errorf("%q: %v", sql, err)
		}
	}
	for sql, construct := range map[string]string{
		"SELECT safe_fn()":                 "safe_fn",
		"SELECT pg_sleep(1)":               "pg_sleep",
		"SELECT (((1)))":                   "nesting depth",
		"SELECT 1 + 1 + 1 + 1 + 1 + 1 + 1": "length",
	} {
		if r := refusal(t, v, sql); r.Construct != construct {
			t.Errorf("%q: construct %q, want %q (%v)", sql, r.Construct, construct, r)
		}
	}
}

func TestKinds(t *testing.T) {
	v := corpusValidator(t)
	for sql, want := range map[string]Kind{"SELECT 1": KindSelect, "VALUES (1)": KindSelect, "EXPLAIN SELECT 1": KindExplain, "SHOW ALL": KindShow} {
		if k, r := v.Check(sql); k != want || r != nil {
			t.Errorf("%q: %q %v, want %q", sql, k, r, want)
		}
	}
}

func TestCache(t *testing.T) {
	v, err := New(Options{CacheSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := v.Validate("SELECT 1"); err != nil {
			t.Fatal(err)
		}
		r1 := refusal(t, v, "SELECT pg_sleep(1)")
		r1.Reason = "mutated by the caller"
		if r2 := refusal(t, v, "SELECT pg_sleep(1)"); r2.Reason == r1.Reason {
			t.Fatal("a cached refusal was shared with the caller")
		}
	}
	if n := v.cache.lru.Len(); n != 2 {
		t.Errorf("cache holds %d entries, want 2", n)
	}
	off, _ := New(Options{CacheSize: -1})
	if off.cache != nil {
		t.Error("CacheSize -1 did not disable the cache")
	}
	if err := off.Validate("SELECT 1"); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrent(t *testing.T) {
	v := corpusValidator(t)
	corpus := readCorpus(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < len(corpus); i += 2 {
				err := v.Validate(corpus[i].SQL)
				if (err == nil) != (corpus[i].Verdict == "allow") {
					t.Errorf("%.40q: %v", corpus[i].SQL, err)
				}
			}
		})
	}
	wg.Wait()
}

// SQL/JSON syntax and allowlisted functions newer than the server are
// refused: to an older server's parser they are calls of functions found
// through its search_path. Zero is PostgreSQL 15.
func TestServerVersion(t *testing.T) {
	cases := []struct {
		sql     string
		allowed map[int]bool // by ServerVersion; missing: refused
	}{
		{`SELECT json_object('a': 1), '{}' IS JSON`, map[int]bool{160000: true, 170000: true}},
		{`SELECT JSON_VALUE(jsonb '{"a":1}', '$.a')`, map[int]bool{170000: true}},
		{`SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS (a int PATH '$'))`, map[int]bool{170000: true}},
		{`SELECT any_value(x) FROM (VALUES (1)) v(x)`, map[int]bool{160000: true, 170000: true}},
		{`SELECT pg_catalog.to_bin(5)`, map[int]bool{170000: true}},
		{`SELECT uuidv7()`, map[int]bool{}},
		{`SELECT json_build_object('a', 1), abs(-1)`, map[int]bool{0: true, 150000: true, 160000: true, 170000: true}},
	}
	for _, ver := range []int{0, 150000, 160000, 170000} {
		v, err := New(Options{ServerVersion: ver, CacheSize: -1})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			err := v.Validate(c.sql)
			if got := err == nil; got != c.allowed[ver] {
				t.Errorf("ServerVersion %d: %s: allowed %v, want %v (%v)", ver, c.sql, got, c.allowed[ver], err)
			}
		}
	}
}
