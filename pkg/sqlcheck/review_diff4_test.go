package sqlcheck

// Review of 1f02b37 (Split as psql -f splits).

import (
	"reflect"
	"testing"
)

// Split promises psql -f's statements (docs/formats.md, "mcpg check"), but
// when PostgreSQL's scanner fails anywhere in the text (an unterminated
// literal or comment, trailing junk after a number, a zero-length quoted
// identifier), the whole file becomes one statement: every statement
// before the bad one loses its own verdict and index. psql 15 -f sends
// the statements up to the bad one separately (checked with
// log_statement=all against PostgreSQL 15):
//
//	"select 1;\nselect 123abc;\nselect 2;\n" -> "select 1;", "select 123abc;", "select 2;"
//	"select 1; select \"\";\nselect 3;"       -> "select 1;", "select \"\";", "select 3;"
//	"select 1;\nselect 'oops; select 2;\n"     -> "select 1;", "select 'oops; select 2;\n" (at end of file)
func TestDiff4ReviewScanErrorMergesEveryStatement(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"select 1;\nselect 123abc;\nselect 2;\n", []string{"select 1", "select 123abc", "select 2"}},
		{"select 1; select \"\";\nselect 3;", []string{"select 1", `select ""`, "select 3"}},
		{"select 1;\nselect 'oops; select 2;\n", []string{"select 1", "select 'oops; select 2;"}},
	} {
		var got []string
		for _, s := range Split("f.sql", c.text) {
			got = append(got, s.SQL)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Split(%q) = %q; psql -f sends %q", c.text, got, c.want)
		}
	}
}
