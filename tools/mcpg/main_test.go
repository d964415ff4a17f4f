package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpkit/qpkit/pkg/sqlcheck"
)

// call runs the CLI in-process with stdin.
func call(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func records(t *testing.T, out string) []sqlcheck.Record {
	t.Helper()
	var recs []sqlcheck.Record
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		var r sqlcheck.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("bad record %q: %v", line, err)
		}
		if r.Type != "check" || r.Version != 1 {
			t.Fatalf("bad type/version in %q", line)
		}
		recs = append(recs, r)
	}
	return recs
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckAllowed(t *testing.T) {
	code, out, errs := call(t, "SELECT 1; SELECT ';' AS \"a;b\"; SELECT $$;$$ /* ; */;\n-- done\n", "check")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	recs := records(t, out)
	if len(recs) != 3 {
		t.Fatalf("got %d records: %s", len(recs), out)
	}
	for i, r := range recs {
		if r.Verdict != "allow" || r.Index != i+1 || r.File != "-" || r.Reason != "" || r.Position != nil || r.Kind != "select" {
			t.Errorf("record %d: %+v", i, r)
		}
	}
	if recs[1].SQL != `SELECT ';' AS "a;b"` {
		t.Errorf("second statement %q", recs[1].SQL)
	}
}

func TestCheckRefusedAndOrder(t *testing.T) {
	a := writeFile(t, "a.sql", "SELECT 1;\nDELETE FROM t;\nSELECT pg_sleep(1)")
	b := writeFile(t, "b.sql", "SHOW ALL;\nSELECT 'x\x00y';")
	code, out, errs := call(t, "", "check", a, b)
	if code != 1 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	recs := records(t, out)
	want := []struct {
		file, verdict, construct string
		index, pos               int
	}{
		{a, "allow", "", 1, 0}, {a, "refuse", "DeleteStmt", 2, 0}, {a, "refuse", "pg_sleep", 3, 7},
		{b, "allow", "", 1, 0}, {b, "refuse", "nul byte", 2, 9},
	}
	if len(recs) != len(want) {
		t.Fatalf("got %d records: %s", len(recs), out)
	}
	for i, w := range want {
		r := recs[i]
		if r.File != w.file || r.Verdict != w.verdict || r.Index != w.index || r.Construct != w.construct {
			t.Errorf("record %d: %+v, want %+v", i, r, w)
		}
		if w.verdict == "refuse" && (r.Position == nil || *r.Position != w.pos || r.Reason == "") {
			t.Errorf("record %d: position/reason %+v", i, r)
		}
	}
}

func TestCheckJSONL(t *testing.T) {
	in := `{"sql": "SELECT 1; SELECT 2"}` + "\n\n" + `{"sql": "SELECT abs(1)", "note": "ignored"}` + "\n"
	code, out, _ := call(t, in, "check", "--jsonl")
	recs := records(t, out)
	if code != 1 || len(recs) != 2 || recs[0].Verdict != "refuse" || recs[0].Line != 1 || recs[1].Verdict != "allow" || recs[1].Line != 3 || recs[1].Index != 2 {
		t.Fatalf("exit %d: %s", code, out)
	}
	code, out, errs := call(t, `{"sql": "SELECT 1"}`+"\n"+`{"sql": `+"\n", "check", "--jsonl", "-")
	if code != 2 || out != "" || !strings.HasPrefix(errs, "mcpg: stdin:2: ") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("bad line: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, _, errs = call(t, `{"query": "SELECT 1"}`, "check", "--jsonl")
	if code != 2 || errs != "mcpg: stdin:1: object has no \"sql\" string\n" {
		t.Fatalf("no sql: exit %d, stderr %q", code, errs)
	}
}

func TestCheckOptions(t *testing.T) {
	code, out, _ := call(t, "EXPLAIN ANALYZE SELECT myschema.f()", "check", "--allow-explain-analyze", "--allow-function", "myschema.f")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	code, out, _ = call(t, "SELECT ((1))", "check", "--max-depth", "1")
	if code != 1 || !strings.Contains(out, `"construct":"nesting depth"`) {
		t.Fatalf("exit %d: %s", code, out)
	}
	code, out, _ = call(t, "SELECT 1", "check", "--max-length", "5")
	if code != 1 || !strings.Contains(out, `"construct":"length"`) {
		t.Fatalf("exit %d: %s", code, out)
	}
}

func TestCheckUsageErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.sql")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"check", missing}, "mcpg: cannot read " + missing + ": no such file or directory\n"},
		{[]string{"check", "--max-depth", "0"}, "mcpg: --max-depth 0 is out of range 1..1000\n"},
		{[]string{"check", "--max-length", "0"}, "mcpg: --max-length 0 must be at least 1\n"},
		{[]string{"check", "--allow-function", "a.b.c"}, "mcpg: bad function name \"a.b.c\" (want name or schema.name)\n"},
	} {
		code, out, errs := call(t, "SELECT 1", c.args...)
		if code != 2 || out != "" || errs != c.msg {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2, %q", c.args, code, out, errs, c.msg)
		}
	}
	for _, args := range [][]string{{}, {"check", "--bogus"}, {"frobnicate"}} {
		code, _, errs := call(t, "", args...)
		if code != 2 || !strings.HasPrefix(errs, "mcpg: ") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q", args, code, errs)
		}
	}
	code, out, _ := call(t, "", "--help")
	if code != 0 || !strings.Contains(out, "check") {
		t.Errorf("--help: exit %d, %q", code, out)
	}
}

func TestCheckUnsplittable(t *testing.T) {
	code, out, _ := call(t, "SELECT 'unterminated; SELECT 2", "check")
	recs := records(t, out)
	if code != 1 || len(recs) != 1 || recs[0].Construct != "syntax" {
		t.Fatalf("exit %d: %s", code, out)
	}
	long := "SELECT '" + strings.Repeat("é", 300) + "'"
	_, out, _ = call(t, long, "check")
	recs = records(t, out)
	if len(recs) != 1 || len(recs[0].SQL) > sqlcheck.MaxSQLShown+3 || !strings.HasSuffix(recs[0].SQL, "...") {
		t.Fatalf("long statement shown as %q", recs[0].SQL)
	}
}
