// Fuzzing the normalizer: it never panics, its output normalizes to itself, and the fingerprint is the text's hash.

package digest

import (
	"testing"

	"github.com/qpkit/qpkit/pkg/tpch"
)

func FuzzNormalize(f *testing.F) {
	for _, s := range pgbenchSimple {
		f.Add(s)
	}
	for n := 1; n <= tpch.NumQueries; n++ {
		q, err := tpch.Query(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(q)
	}
	for _, s := range []string{
		"select E'a\\'b', $$x$$, $t$y$t$, B'01', X'ff', U&'a' uescape '!', 'a'\n'b'",
		"select * from t where a in (1, 2) and b = any(array[1, 2]) order by 1, 2",
		"insert into t values (1, 'a'), ($1, $2::int), (3), (4, now()) returning id",
		"select a-1, -1, a||-1, a<-1 /* c /* d */ */ -- e",
		`select "Q""t", U&"x", $, $a, a$b, $1a, 1..2, .5e, 0x`,
		"select 'unterminated", "select \"unterminated", "/* unterminated", "$q$ unterminated",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		got, fp := Normalize(sql)
		if fp != Hash([]byte(got)) {
			t.Fatalf("fingerprint %x is not the hash of %q", fp, got)
		}
		again, fp2 := Normalize(got)
		if again != got || fp2 != fp {
			t.Fatalf("not idempotent:\n in    %q\n once  %q\n twice %q", sql, got, again)
		}
	})
}
