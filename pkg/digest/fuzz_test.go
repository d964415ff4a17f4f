// Fuzzing the normalizer: it never panics, its output normalizes to itself, the fingerprint is the text's hash, and the store's text cache agrees.

package digest

import (
	"fmt"
	"testing"
	"time"

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
		// Twice through a store: the second time may come from its text
		// cache, and must land on the same shape.
		st := NewStore(0)
		st.Observe("p", "r", sql, time.Microsecond, 0, "")
		st.Observe("p", "r", sql, time.Microsecond, 0, "")
		shapes, _ := st.Snapshot()
		if len(shapes) != 1 || shapes[0].Fingerprint != fmt.Sprintf("%016x", fp) || shapes[0].Calls != 2 {
			t.Fatalf("store after two observations of %q: %+v, want one shape %016x with 2 calls", sql, shapes, fp)
		}
	})
}
