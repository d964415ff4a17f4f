package main

import (
	"strings"
	"testing"
)

// An unbalanced parenthesis must not make the rest of the input vanish.
// psql (psqlscan.l) never lets its paren depth go below 0, so
// "SELECT 1); DELETE FROM t;" is sent as two statements, the second a
// DELETE; at end of input psql sends what is left in the buffer, so
// "SELECT (1; DELETE FROM t;" is one (bad) statement. mcpg check writes
// no record at all for either and exits 0: a file containing a DELETE
// passes the lint.
func TestCliReviewCheckUnbalancedParenDropsStatements(t *testing.T) {
	for _, in := range []string{
		"SELECT 1); DELETE FROM t;",
		"SELECT (1; DELETE FROM t;",
	} {
		code, out, errs := call(t, in, "check")
		recs := records(t, out)
		if code != exitRefused || len(recs) == 0 {
			t.Errorf("%q: exit %d, %d records %q, stderr %q; want exit 1 and a refusal", in, code, len(recs), out, errs)
		}
	}
}

// A non-empty statement must give a record even when it contains no
// keyword token: the splitter drops it as if it were empty, so a typo
// ("selec 1;", "now();") passes the lint with no record and exit 0, while
// PostgreSQL 15 answers `ERROR: syntax error at or near "selec"`.
func TestCliReviewCheckKeywordlessStatementDropped(t *testing.T) {
	for _, in := range []string{
		"selec 1;",
		"SELECT 1; now();",
	} {
		code, out, _ := call(t, in, "check")
		recs := records(t, out)
		want := strings.Count(in, ";")
		if len(recs) != want || code != exitRefused {
			t.Errorf("%q: exit %d, %d records, want exit 1 and %d records: %s", in, code, len(recs), want, out)
		}
	}
}

// A file saved with a UTF-8 byte order mark: psql -f skips the BOM and
// runs "select 1". mcpg check scans it as part of the identifier
// "\ufeffselect", finds no keyword and drops the statement: no record.
func TestCliReviewCheckBOMStatementDropped(t *testing.T) {
	code, out, _ := call(t, "\ufeffselect 1;\n", "check")
	recs := records(t, out)
	if code != exitOK || len(recs) != 1 || recs[0].SQL != "select 1" || recs[0].Verdict != "allow" {
		t.Errorf("exit %d, %d records: %q; want one allowed \"select 1\"", code, len(recs), out)
	}
}

// A SQL-standard function body (BEGIN ATOMIC ... END, PostgreSQL 14+) is
// one statement for PostgreSQL and psql (psqlscan tracks begin_depth);
// mcpg check splits it at the semicolons inside the body, reporting
// "SELECT 2" as an allowed statement of its own and "END" as another,
// and numbering every later statement wrongly.
func TestCliReviewCheckBeginAtomicSplit(t *testing.T) {
	in := "CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT 2; END;\nSELECT 3;"
	_, out, _ := call(t, in, "check")
	recs := records(t, out)
	if len(recs) != 2 || recs[1].SQL != "SELECT 3" || recs[1].Index != 2 {
		t.Errorf("got %d records, want 2 (the CREATE FUNCTION, then SELECT 3 as index 2):\n%s", len(recs), out)
	}
}

// --jsonl reads the "sql" member; other members are ignored
// (docs/formats.md). encoding/json matches member names case-insensitively,
// so a "SQL" (or "Sql") member replaces "sql": the record reports the
// verdict of other text than the "sql" member's, here allowing a line whose
// sql is a DELETE.
func TestCliReviewCheckJSONLCaseInsensitiveKey(t *testing.T) {
	in := `{"sql": "DELETE FROM t", "SQL": "SELECT 1"}` + "\n"
	code, out, errs := call(t, in, "check", "--jsonl")
	recs := records(t, out)
	if code != exitRefused || len(recs) != 1 || recs[0].SQL != "DELETE FROM t" || recs[0].Verdict != "refuse" {
		t.Errorf("exit %d, stdout %q, stderr %q; want the DELETE refused (exit 1)", code, out, errs)
	}
	// An object with only "SQL" has no "sql" member: an error naming the line.
	code, out, errs = call(t, `{"SQL": "SELECT 1"}`+"\n", "check", "--jsonl")
	if code != exitUsage || out != "" || !strings.HasPrefix(errs, "mcpg: stdin:1: ") {
		t.Errorf("only SQL: exit %d, stdout %q, stderr %q; want exit 2, stdin:1", code, out, errs)
	}
}

// Split trims statements with strings.TrimSpace, which also strips
// Unicode spaces such as U+00A0 (NO-BREAK SPACE, common in text copied
// from web pages). PostgreSQL does not treat U+00A0 as white space (it is
// an identifier character): "\u00a0SELECT * FROM t" fails with a syntax
// error, and mcpg serve's validator, which gets the text untrimmed,
// refuses it. mcpg check allows it.
func TestCliReviewCheckTrimsNonSQLWhitespace(t *testing.T) {
	// The same text as a JSON line is not trimmed, and is refused.
	code, out, _ := call(t, `{"sql": "\u00a0SELECT * FROM t"}`, "check", "--jsonl")
	if recs := records(t, out); code != exitRefused || len(recs) != 1 || recs[0].Construct != "syntax" {
		t.Fatalf("--jsonl: exit %d: %s", code, out)
	}
	code, out, _ = call(t, "\u00a0SELECT * FROM t;", "check")
	recs := records(t, out)
	if code != exitRefused || len(recs) != 1 || recs[0].Verdict != "refuse" {
		t.Errorf("exit %d: %s; want a refusal (syntax), as --jsonl and mcpg serve give", code, out)
	}
}
