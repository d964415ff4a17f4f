package duckdialect

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/qpkit/qpkit/pkg/tpch"
)

// corpusStatements reads the safe-SQL validator's corpus: 260-odd varied
// statements, hostile ones included.
func corpusStatements(t testing.TB) []string {
	f, err := os.Open("../safesql/testdata/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec struct {
			SQL string `json:"sql"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		out = append(out, rec.SQL)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkTranslate requires a translation, an *UnsupportedError or a
// *SyntaxError, and no panic; a translated statement must be a query.
func checkTranslate(t *testing.T, sql string) {
	out, err := Translate(sql)
	var ue *UnsupportedError
	var se *SyntaxError
	switch {
	case err == nil:
		if out == "" {
			t.Errorf("%q: empty translation", sql)
		}
		if ok, qerr := IsQuery(sql); qerr != nil || !ok {
			t.Errorf("%q translated but IsQuery = %v, %v", sql, ok, qerr)
		}
	case errors.As(err, &ue), errors.As(err, &se):
	default:
		t.Errorf("%q: untyped error %v", sql, err)
	}
}

// TestCorpusNoPanics translates every corpus statement.
func TestCorpusNoPanics(t *testing.T) {
	stmts := corpusStatements(t)
	if len(stmts) < 100 {
		t.Fatalf("only %d corpus statements", len(stmts))
	}
	for _, s := range stmts {
		checkTranslate(t, s)
	}
}

// FuzzTranslate looks for statements that make Translate panic or return
// an untyped error.
func FuzzTranslate(f *testing.F) {
	for n := 1; n <= tpch.NumQueries; n++ {
		q, _ := tpch.Query(n)
		f.Add(q)
	}
	for _, q := range semanticCases {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, sql string) { checkTranslate(t, sql) })
}
