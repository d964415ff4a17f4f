package mcpserver

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkString fails unless appendJSONString writes s as json.Marshal does.
func checkString(t *testing.T, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendJSONString([]byte("x"), s); !bytes.Equal(got[1:], want) || got[0] != 'x' {
		t.Fatalf("%q: got %s, want %s", s, got[1:], want)
	}
}

func TestAppendJSONStringAsEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "a", `"`, `\`, "<>&", "\u2028\u2029", "\u2027\u202a", "\x7f", "\xe2\x80", "\xe2\x80\xa8x", "\xe2",
		"é€😀", "\xff\xfe", "\xed\xa0\x80", "\xf4\x90\x80\x80", "a\tb\nc\rd\be\ff\x00\x01\x1f",
		"id\tname\n1\tx\\y\n(1 rows)", strings.Repeat("ab\t", 1000) + "\u2028",
	} {
		checkString(t, s)
	}
	// Every byte alone and every pair of bytes.
	for a := range 256 {
		checkString(t, string([]byte{byte(a)}))
		for b := range 256 {
			checkString(t, string([]byte{byte(a), byte(b)}))
		}
	}
	// Random strings from a biased alphabet, valid and invalid UTF-8.
	pieces := []string{"a", "Z", "\t", "\n", "\\", `"`, "<", "&", "\x00", "\x1b", "é", "€", "😀", "\u2028", "\u2029",
		"\xe2", "\x80", "\xa8", "\xff", " ", "\x7f"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		checkString(t, b.String())
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\tb", "\u2028", "\xe2\x80", "<&>", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkString(t, s) })
}

func TestMembers(t *testing.T) {
	type kv struct{ k, v string }
	for _, c := range []struct {
		in   string
		want []kv // nil: not an object members accepts
	}{
		{`{}`, []kv{}},
		{" \t\r\n{ } \n", []kv{}},
		{`{"a":1}`, []kv{{"a", "1"}}},
		{`{"a" : "x\"}" , "b":{"c":[1,"]",{}]},"d":null}`, []kv{{"a", `"x\"}"`}, {"b", `{"c":[1,"]",{}]}`}, {"d", "null"}}},
		{`{"a\"b":true}`, []kv{{`a\"b`, "true"}}},
		{`{"a":-1.5e3 }`, []kv{{"a", "-1.5e3"}}},
		{`{"a":1}x`, nil},
		{`{"a":1,}`, nil},
		{`{"a" 1}`, nil},
		{`{"a":}`, nil},
		{`{"a":1`, nil},
		{`{"a":"1}`, nil},
		{`{"a":{"b":1}`, nil},
		{`{a:1}`, nil},
		{`[1]`, nil},
		{`"x"`, nil},
		{``, nil},
		{`{"a":1 "b":2}`, nil},
	} {
		got := []kv{}
		ok := members([]byte(c.in), func(k, v []byte) bool {
			got = append(got, kv{string(k), string(v)})
			return true
		})
		switch {
		case c.want == nil && ok:
			t.Errorf("%q: accepted, members %q", c.in, got)
		case c.want != nil && !ok:
			t.Errorf("%q: refused", c.in)
		case c.want != nil && !equalKV(got, c.want):
			t.Errorf("%q: members %q, want %q", c.in, got, c.want)
		}
	}
	// fn refusing a member refuses the object.
	if members([]byte(`{"a":1,"b":2}`), func(k, _ []byte) bool { return string(k) != "b" }) {
		t.Error("a refused member was accepted")
	}
}

func equalKV[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPlainID(t *testing.T) {
	for id, want := range map[string]bool{
		`"x"`: true, `""`: true, `0`: true, `-7`: true, `123456789012345`: true, `-123456789012345`: true,
		`1234567890123456`: false, `-0`: false, `01`: false, `1.5`: false, `1e3`: false, `true`: false,
		`null`: false, `{}`: false, `[1]`: false, ``: false, `-`: false,
	} {
		if got := plainID([]byte(id)); got != want {
			t.Errorf("plainID(%s) = %v", id, got)
		}
	}
}

// BenchmarkAppendJSONString escapes 13 MB of TSV like the 100,000-row
// lineitem result, against encoding/json.
func BenchmarkAppendJSONString(b *testing.B) {
	row := "1\t155190\t7706\t1\t17.00\t21168.23\t0.04\t0.02\tN\tO\t1996-03-13\t1996-02-12\t1996-03-22\tDELIVER IN PERSON\tTRUCK\tegular courts above the\n"
	text := strings.Repeat(row, 13<<20/len(row))
	if !utf8.ValidString(text) {
		b.Fatal("invalid")
	}
	b.Run("fast", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		var buf []byte
		for b.Loop() {
			buf = appendJSONString(buf[:0], text)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			if _, err := json.Marshal(text); err != nil {
				b.Fatal(err)
			}
		}
	})
}
