// Unit tests of the JSON appenders on text forms the server sends under other settings.

package pgexec

import (
	"encoding/json"
	"testing"
)

func TestAppenders(t *testing.T) {
	var s serializer
	cases := []struct {
		kind kind
		elem kind
		in   string
		want string
	}{
		{kTimestamptz, 0, "2024-01-02 03:04:05+05:30", `"2024-01-02T03:04:05+05:30"`},
		{kTimestamptz, 0, "2024-01-02 03:04:05.25-08", `"2024-01-02T03:04:05.25-08:00"`},
		{kTimestamptz, 0, "1850-01-02 03:04:05+00:01:15", `"1850-01-02 03:04:05+00:01:15"`}, // LMT offsets have seconds
		{kTimestamptz, 0, "10000-01-01 00:00:00+00", `"10000-01-01 00:00:00+00"`},
		{kTimestamp, 0, "Mon Jan 02 03:04:05 2024", `"Mon Jan 02 03:04:05 2024"`}, // DateStyle Postgres
		{kTimestamp, 0, "2024-01-02 03:04:05+00", `"2024-01-02 03:04:05+00"`},
		{kString, 0, "bad \xff utf8 \x7f", `"bad \ufffd utf8 ` + "\x7f" + `"`},
		{kString, 0, "\u2028\b\f\r", `"` + "\u2028" + `\u0008\u000c\r"`},
		{kNumeric, 0, "-0.000000000000000000001", `-0.000000000000000000001`},
		{kNumeric, 0, "1.000000000000000000000", `1.000000000000000000000`},
		{kNumeric, 0, "1234567890123456", `"1234567890123456"`},
		{kNumeric, 0, "-Infinity", `"-Infinity"`},
		{kInt8, 0, "-9007199254740993", `"-9007199254740993"`},
		{kInt8, 0, "999999999999999", `999999999999999`},
		{kBytea, 0, `\x4`, `"\\x4"`},
		{kBytea, 0, `\001`, `"\\001"`}, // bytea_output=escape
		{kBool, 0, "x", `"x"`},
		{kInt, 0, "12a", `"12a"`},
		{kFloat, 0, "1.", `"1."`},
		{kFloat, 0, "-1.5e-07", `-1.5e-07`},
		{kArray, kString, `{"a\\\"b",c}`, `["a\\\"b","c"]`},
		{kArray, kString, `{"unterminated`, `"{\"unterminated"`},
		{kArray, kInt, `{1,2`, `"{1,2"`},
		{kArray, kInt, `{{1},{2}}x`, `"{{1},{2}}x"`},
		{kArray, kString, `{""}`, `[""]`},
		{kArray, kJSON, `{"[1, {\"a\": null}]",NULL}`, `[[1, {"a": null}],null]`},
	}
	for _, c := range cases {
		got := s.appendValue(nil, []byte(c.in), typeInfo{kind: c.kind, elem: c.elem})
		if string(got) != c.want {
			t.Errorf("%q: got %s, want %s", c.in, got, c.want)
		}
		if !json.Valid(got) {
			t.Errorf("%q: invalid JSON %s", c.in, got)
		}
	}
}

// FuzzArrayIsValidJSON: whatever the text, an array column yields valid
// JSON (a parsed array or a string). json/jsonb elements are left out: they
// are embedded as the server validated them.
func FuzzArrayIsValidJSON(f *testing.F) {
	for _, seed := range []string{`{}`, `{1,2}`, `{{"a"},{NULL}}`, `{"\\"}`, `[1:2]={1,2}`, `{`, `{"}`, `{,}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var s serializer
		for _, k := range []kind{kString, kInt, kInt8, kFloat, kNumeric, kBool, kBytea, kTimestamp, kTimestamptz} {
			got := s.appendArray(nil, []byte(in), k)
			if !json.Valid(got) {
				t.Fatalf("%q as %d: invalid JSON %s", in, k, got)
			}
		}
	})
}
