package sqlcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/qpkit/qpkit/pkg/safesql"
)

func TestSplit(t *testing.T) {
	got := Split("a.sql", "SELECT 1; SELECT ';' AS \"a;b\"; SELECT $$;$$ /* ; */;\n-- done\n;;")
	want := []string{"SELECT 1", `SELECT ';' AS "a;b"`, "SELECT $$;$$ /* ; */"}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i, s := range got {
		if s.File != "a.sql" || s.Index != i+1 || s.Line != 0 || s.SQL != want[i] {
			t.Errorf("statement %d: %+v, want %q", i, s, want[i])
		}
	}
	// NUL bytes do not stop the scanner and stay in the statement.
	if got := Split("-", "SELECT 'x\x00y'; SELECT 2"); len(got) != 2 || got[0].SQL != "SELECT 'x\x00y'" {
		t.Errorf("NUL: %+v", got)
	}
	// Unsplittable text is one statement.
	if got := Split("-", " SELECT 'unterminated; SELECT 2 "); len(got) != 1 || got[0].SQL != "SELECT 'unterminated; SELECT 2" {
		t.Errorf("unterminated: %+v", got)
	}
}

// Split ends statements where psql does (psql -f sends these statements
// to PostgreSQL 15 so).
func TestSplitAsPsql(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"SELECT 1); DELETE FROM t;", []string{"SELECT 1)", "DELETE FROM t"}},
		{"SELECT (1; DELETE FROM t;", []string{"SELECT (1; DELETE FROM t;"}},
		{"selec 1; now();", []string{"selec 1", "now()"}},
		{"\ufeffselect 1;", []string{"select 1"}},
		{"-- only a comment\n; /* and another */ ;", nil},
		{"\u00a0SELECT 1;", []string{"\u00a0SELECT 1"}},
		{"CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT CASE WHEN true THEN 2 END; END; SELECT 3",
			[]string{"CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT CASE WHEN true THEN 2 END; END", "SELECT 3"}},
		{"create or replace procedure p() begin atomic insert into t values (1); end; select 4;",
			[]string{"create or replace procedure p() begin atomic insert into t values (1); end", "select 4"}},
		// BEGIN opens a block only in CREATE FUNCTION or PROCEDURE.
		{"BEGIN; SELECT 1; END;", []string{"BEGIN", "SELECT 1", "END"}},
		{`CREATE TABLE "begin" (a int); SELECT 1;`, []string{`CREATE TABLE "begin" (a int)`, "SELECT 1"}},
		// Tokens psql reads and the server's scanner refuses do not merge
		// the rest; an unterminated literal runs to the end.
		{"select 1;\nselect 123abc;\nselect 2;", []string{"select 1", "select 123abc", "select 2"}},
		{"select 'é'; select \"\"; select 3", []string{"select 'é'", `select ""`, "select 3"}},
		{"select 1;\nselect 'oops; select 2;", []string{"select 1", "select 'oops; select 2;"}},
	} {
		var got []string
		for _, st := range Split("-", c.text) {
			got = append(got, st.SQL)
		}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) {
			t.Errorf("Split(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestSplitJSONL(t *testing.T) {
	got, err := SplitJSONL("q.jsonl", []byte(`{"sql": "SELECT 1"}`+"\n\n"+`{"sql": "SELECT 2", "note": "x"}`+"\n"))
	if err != nil || len(got) != 2 || got[1] != (Statement{File: "q.jsonl", Index: 2, Line: 3, SQL: "SELECT 2"}) {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := SplitJSONL("-", []byte(`{"sql": "SELECT 1"}`+"\n"+`{"sql": `)); err == nil || !strings.HasPrefix(err.Error(), "stdin:2: ") {
		t.Errorf("bad line: %v", err)
	}
	for _, line := range []string{`{"query": 1}`, `{"sql": null}`, `{"sql": 1}`, `{"SQL": "SELECT 1"}`, `null`} {
		if _, err := SplitJSONL("q.jsonl", []byte(line)); err == nil || err.Error() != `q.jsonl:1: object has no "sql" string` {
			t.Errorf("%s: %v", line, err)
		}
	}
}

func TestRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.sql")
	if err := os.WriteFile(p, []byte("SELECT 1; SELECT 2"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Read([]string{p, "-"}, false, strings.NewReader("SHOW ALL"))
	if err != nil || len(got) != 3 || got[1].File != p || got[1].Index != 2 || got[2].File != "-" || got[2].Index != 1 {
		t.Fatalf("%+v %v", got, err)
	}
	missing := filepath.Join(t.TempDir(), "missing.sql")
	if _, err := Read([]string{p, missing}, false, nil); err == nil || err.Error() != "cannot read "+missing+": no such file or directory" {
		t.Errorf("missing file: %v", err)
	}
}

func TestCheckAll(t *testing.T) {
	v, err := safesql.New(safesql.Options{})
	if err != nil {
		t.Fatal(err)
	}
	long := "SELECT '" + strings.Repeat("é", 300) + "'"
	stmts := append(Split("a.sql", "SELECT 1; DELETE FROM t"), Statement{File: "-", Index: 1, SQL: long})
	var out bytes.Buffer
	refused, err := CheckAll(&out, v, stmts)
	if err != nil || !refused {
		t.Fatalf("refused %v, err %v", refused, err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 || lines[0] != `{"type":"check","version":1,"file":"a.sql","index":1,"verdict":"allow","kind":"select","sql":"SELECT 1"}` {
		t.Fatalf("output:\n%s", out.String())
	}
	var r Record
	if err := json.Unmarshal([]byte(lines[1]), &r); err != nil || r.Verdict != "refuse" || r.Construct != "DeleteStmt" || r.Position == nil || r.Reason == "" {
		t.Errorf("refusal %s: %v", lines[1], err)
	}
	if err := json.Unmarshal([]byte(lines[2]), &r); err != nil || len(r.SQL) > MaxSQLShown+3 || !strings.HasSuffix(r.SQL, "...") || !strings.HasPrefix(long, strings.TrimSuffix(r.SQL, "...")) {
		t.Errorf("long statement shown as %q: %v", r.SQL, err)
	}
	if refused, err := CheckAll(&out, v, Split("-", "SELECT 1")); err != nil || refused {
		t.Errorf("allowed: refused %v, err %v", refused, err)
	}
	if _, err := CheckAll(failingWriter{}, v, stmts); !errors.Is(err, syscall.EPIPE) {
		t.Errorf("write error: %v", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }
