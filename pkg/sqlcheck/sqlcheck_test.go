package sqlcheck

import (
	"bytes"
	"encoding/json"
	"errors"
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

func TestSplitJSONL(t *testing.T) {
	got, err := SplitJSONL("q.jsonl", []byte(`{"sql": "SELECT 1"}`+"\n\n"+`{"sql": "SELECT 2", "note": "x"}`+"\n"))
	if err != nil || len(got) != 2 || got[1] != (Statement{File: "q.jsonl", Index: 2, Line: 3, SQL: "SELECT 2"}) {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := SplitJSONL("-", []byte(`{"sql": "SELECT 1"}`+"\n"+`{"sql": `)); err == nil || !strings.HasPrefix(err.Error(), "stdin:2: ") {
		t.Errorf("bad line: %v", err)
	}
	if _, err := SplitJSONL("q.jsonl", []byte(`{"query": 1}`)); err == nil || err.Error() != `q.jsonl:1: object has no "sql" string` {
		t.Errorf("no sql: %v", err)
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
