// Tests of FormatTSV: escaping, the header and footer, limits, agreement with the server's COPY output, and a round-trip fuzz test.

package pgexec

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// tsvDoc is a parsed TSV document; a nil value is NULL.
type tsvDoc struct {
	header []string // name:type fields, unescaped
	rows   [][]*string
	footer string
}

// parseTSV splits doc on its newlines (values never hold a raw one) into
// header, rows and footer, and undoes COPY's escaping.
func parseTSV(t testing.TB, doc string) tsvDoc {
	t.Helper()
	lines := strings.Split(doc, "\n")
	if len(lines) < 2 {
		t.Fatalf("no header and footer: %q", doc)
	}
	var d tsvDoc
	if lines[0] != "" {
		for _, f := range strings.Split(lines[0], "\t") {
			d.header = append(d.header, unescapeCopy(t, f))
		}
	}
	for _, l := range lines[1 : len(lines)-1] {
		var row []*string
		for _, f := range strings.Split(l, "\t") {
			if f == `\N` {
				row = append(row, nil)
				continue
			}
			v := unescapeCopy(t, f)
			row = append(row, &v)
		}
		if len(row) != max(len(d.header), 1) {
			t.Fatalf("row %q has %d fields, header %d", l, len(row), len(d.header))
		}
		d.rows = append(d.rows, row)
	}
	d.footer = lines[len(lines)-1]
	return d
}

// unescapeCopy undoes the escapes appendCopyText writes.
func unescapeCopy(t testing.TB, f string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i == len(f) {
			t.Fatalf("dangling backslash in %q", f)
		}
		r, ok := map[byte]byte{'\\': '\\', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v'}[f[i]]
		if !ok {
			t.Fatalf("unexpected escape \\%c in %q", f[i], f)
		}
		b.WriteByte(r)
	}
	return b.String()
}

func (d tsvDoc) cell(i, j int) string {
	if v := d.rows[i][j]; v != nil {
		return *v
	}
	return "NULL"
}

func TestAppendCopyText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"plain text, 'quotes' \"double\"", "plain text, 'quotes' \"double\""},
		{`a\b`, `a\\b`},
		{"tab\there", `tab\there`},
		{"new\nline", `new\nline`},
		{"cr\rlf\r\n", `cr\rlf\r\n`},
		{"\b\f\v", `\b\f\v`},
		{`\N`, `\\N`},
		{`\.`, `\\.`},
		{"\x01\x1b\x7f", "\x01\x1b\x7f"}, // COPY leaves other control characters alone
		{"é日本😀", "é日本😀"},
		{"bad \xff utf8", "bad \ufffd utf8"},
		{"\xe6\x97", "\ufffd\ufffd"},
	}
	for _, c := range cases {
		if got := string(appendCopyText(nil, []byte(c.in))); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTSVRowAndFooter(t *testing.T) {
	cols := []colInfo{{typ: types[25]}, {typ: types[1042]}, {typ: types[23]}, {typ: types[1014]}}
	vals := [][]byte{[]byte(""), []byte("ab   "), nil, []byte(`{"a  ","b  "}`)}
	got, ok := appendTSVRow([]byte("h"), 0, 1000, vals, cols)
	if want := "h\n\tab\t\\N\t{\"a  \",\"b  \"}"; !ok || string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// Only the pad goes: a bpchar of spaces becomes empty, not NULL.
	for _, c := range []struct {
		v, want string
	}{{"   ", "\n"}, {" a b ", "\n a b"}, {"x\t ", "\nx\\t"}} {
		got, _ := appendTSVRow(nil, 0, 1000, [][]byte{[]byte(c.v)}, cols[1:2])
		if string(got) != c.want {
			t.Errorf("bpchar %q: got %q, want %q", c.v, got, c.want)
		}
	}
	// Too long: nothing is written.
	if got, ok := appendTSVRow([]byte("head"), 0, trailerRoom+10, [][]byte{[]byte("0123456789")}, cols[:1]); ok || string(got) != "head" {
		t.Errorf("over the cap: %v %q", ok, got)
	}
	for _, c := range []struct {
		rows int
		by   string
		want string
	}{{0, "", "\n(0 rows)"}, {1, "", "\n(1 rows)"}, {100, "rows", "\n(100 rows, truncated by rows)"}, {7, "bytes", "\n(7 rows, truncated by bytes)"}} {
		if got := string(appendTSVFooter(nil, c.rows, c.by)); got != c.want {
			t.Errorf("footer %d %q: got %q, want %q", c.rows, c.by, got, c.want)
		}
	}
	if n := len(appendTSVFooter(nil, MaxSkip, "bytes")); n > trailerRoom {
		t.Errorf("the longest footer is %d bytes, more than the %d reserved", n, trailerRoom)
	}
}

func tsvExec(t testing.TB, opts Options) *Executor {
	t.Helper()
	opts.Format = FormatTSV
	return newExec(t, newPool(t, 1, true), opts)
}

func runTSV(t testing.TB, e *Executor, sql string, params ...any) (Result, tsvDoc) {
	t.Helper()
	res, err := e.Run(testCtx(t), sql, params, nil)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if res.JSON != nil || !utf8.Valid(res.Doc) {
		t.Fatalf("%s: JSON %q, valid UTF-8 %v", sql, res.JSON, utf8.Valid(res.Doc))
	}
	return res, parseTSV(t, string(res.Doc))
}

func TestTSVSelect(t *testing.T) {
	e := tsvExec(t, Options{})
	res, _ := runTSV(t, e, "SELECT 1 AS a, 'x'::text AS b")
	if want := "a:int4\tb:text\n1\tx\n(1 rows)"; string(res.Doc) != want {
		t.Fatalf("got %q, want %q", res.Doc, want)
	}
	if res.Rows != 1 || res.Truncated || res.Command != "SELECT 1" || len(res.Columns) != 2 || res.Columns[1].Type != "text" {
		t.Fatalf("result %+v", res)
	}
	// Appends to dst.
	out, err := e.Run(testCtx(t), "SELECT 'x' AS a", nil, []byte("prefix:"))
	if err != nil || string(out.Doc) != "prefix:a:text\nx\n(1 rows)" {
		t.Fatalf("%v %q", err, out.Doc)
	}
	for sql, want := range map[string]string{
		"SELECT 1 AS a WHERE false":  "a:int4\n(0 rows)",
		"":                           "\n(0 rows)",
		"SHOW transaction_read_only": "transaction_read_only:text\non\n(1 rows)",
		"SELECT 1 AS \"we\"\"ird\\name\", 2 AS \"tab\tnl\nx\", 3 AS \"a:b\", 4::oid AS \"日本\", '(1,2)'::point AS p": "we\"ird\\\\name:int4\ttab\\tnl\\nx:int4\ta:b:int4\t日本:oid\tp:oid:600\n1\t2\t3\t4\t(1,2)\n(1 rows)",
	} {
		res, _ := runTSV(t, e, sql)
		if string(res.Doc) != want {
			t.Errorf("%s:\ngot  %q\nwant %q", sql, res.Doc, want)
		}
	}
	assertPoolIdle(t, e.pool)
}

// TestTSVTypes checks values of many types: their expected text, and that
// each row line is what COPY ... TO STDOUT writes for it on the same
// connection settings, apart from bpchar's pad.
func TestTSVTypes(t *testing.T) {
	e := tsvExec(t, Options{})
	cases := []struct{ expr, typ, want string }{
		{"NULL::text", "text", `\N`},
		{"''::text", "text", ``},
		{"'NULL'::text", "text", `NULL`},
		{`'\N'::text`, "text", `\\N`},
		{`E'a\\b\tc\nd\re\bf\fg\x0bh\x01i'`, "text", `a\\b\tc\nd\re\bf\fg\vh` + "\x01i"},
		{"'é日本😀'::varchar", "varchar", "é日本😀"},
		{"'ab'::char(5)", "bpchar", "ab"},
		{"' a b '::char(8)", "bpchar", " a b"},
		{"''::char(3)", "bpchar", ""},
		{"NULL::char(3)", "bpchar", `\N`},
		{"ARRAY['a'::char(3), 'b'::char(3)]", "bpchar[]", `{"a  ","b  "}`},
		{"1::int2", "int2", "1"},
		{"9007199254740993::int8", "int8", "9007199254740993"},
		{"123.4500::numeric", "numeric", "123.4500"},
		{"'NaN'::numeric", "numeric", "NaN"},
		{"0.1::float4", "float4", "0.1"},
		{"1e300::float8", "float8", "1e+300"},
		{"'-Infinity'::float8", "float8", "-Infinity"},
		{"true", "bool", "t"},
		{`'\x00ff10'::bytea`, "bytea", `\\x00ff10`},
		{"''::bytea", "bytea", `\\x`},
		{"'2024-02-29'::date", "date", "2024-02-29"},
		{"'2024-01-02 03:04:05.123456'::timestamp", "timestamp", "2024-01-02 03:04:05.123456"},
		{"'2024-01-02 03:04:05.5+02'::timestamptz", "timestamptz", "2024-01-02 01:04:05.5+00"},
		{"'infinity'::timestamptz", "timestamptz", "infinity"},
		{"'1 day 02:00'::interval", "interval", "1 day 02:00:00"},
		{`'{"a": [1, "x\ty"]}'::json`, "json", `{"a": [1, "x\\ty"]}`},
		{`E'{"a":\n"b"}'::json`, "json", `{"a":\n"b"}`},
		{`'{"b":1,"a":"x"}'::jsonb`, "jsonb", `{"a": "x", "b": 1}`},
		{"'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid", "uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{"ARRAY[1,2,NULL]", "int4[]", "{1,2,NULL}"},
		{"ARRAY[[1,2],[3,4]]", "int4[]", "{{1,2},{3,4}}"},
		{`ARRAY['a b', 'c"d', NULL, 'NULL', '', E'e\\f', E't\tu']`, "text[]", `{"a b","c\\"d",NULL,"NULL","","e\\\\f","t\tu"}`},
		{`ARRAY['\x01'::bytea]`, "bytea[]", `{"\\\\x01"}`},
		{`ARRAY['{"a": "q\"x"}'::jsonb]`, "jsonb[]", `{"{\\"a\\": \\"q\\\\\\"x\\"}"}`},
		{"'(1,2)'::point", "oid:600", "(1,2)"},
	}
	var sel []string
	for i, c := range cases {
		sel = append(sel, c.expr+" AS c"+strconv.Itoa(i))
	}
	sql := "SELECT " + strings.Join(sel, ", ")
	res, err := e.Run(testCtx(t), sql, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(res.Doc), "\n")
	if len(lines) != 3 || lines[2] != "(1 rows)" {
		t.Fatalf("got %q", res.Doc)
	}
	header := strings.Split(lines[0], "\t")
	fields := strings.Split(lines[1], "\t")
	if len(header) != len(cases) || len(fields) != len(cases) {
		t.Fatalf("%d header fields, %d values, want %d: %q", len(header), len(fields), len(cases), res.Doc)
	}
	for i, c := range cases {
		if want := "c" + strconv.Itoa(i) + ":" + c.typ; header[i] != want {
			t.Errorf("%s: header %q, want %q", c.expr, header[i], want)
		}
		if fields[i] != c.want {
			t.Errorf("%s: got %q, want %q", c.expr, fields[i], c.want)
		}
	}

	// The same row from COPY, on a connection of the same pool (same
	// session settings).
	conn, err := e.pool.Acquire(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	var copied bytes.Buffer
	_, err = conn.Conn().PgConn().CopyTo(testCtx(t), &copied, "COPY ("+sql+") TO STDOUT")
	conn.Release()
	if err != nil {
		t.Fatal(err)
	}
	copyFields := strings.Split(strings.TrimSuffix(copied.String(), "\n"), "\t")
	if len(copyFields) != len(cases) {
		t.Fatalf("COPY gave %d fields: %q", len(copyFields), copied.String())
	}
	for i, c := range cases {
		want := copyFields[i]
		if c.typ == "bpchar" {
			want = strings.TrimRight(want, " ")
		}
		if fields[i] != want {
			t.Errorf("%s: %q, COPY writes %q", c.expr, fields[i], copyFields[i])
		}
	}
	assertPoolIdle(t, e.pool)
}

func TestTSVRowCap(t *testing.T) {
	e := tsvExec(t, Options{MaxRows: 100})
	for _, c := range []struct {
		n      int
		rows   int
		footer string
	}{
		{1000, 100, "(100 rows, truncated by rows)"},
		{100, 100, "(100 rows)"},
		{101, 100, "(100 rows, truncated by rows)"},
	} {
		res, d := runTSV(t, e, "SELECT g FROM generate_series(1, "+strconv.Itoa(c.n)+") g")
		if res.Rows != c.rows || len(d.rows) != c.rows || d.footer != c.footer || d.cell(c.rows-1, 0) != strconv.Itoa(c.rows) {
			t.Errorf("%d rows, cap 100: %+v, footer %q", c.n, res, d.footer)
		}
	}
	// RunSkip pages the same way in both formats.
	res, err := e.RunSkip(testCtx(t), "SELECT g FROM generate_series(1, 250) g", nil, 200, nil)
	if err != nil || !strings.HasPrefix(string(res.Doc), "g:int4\n201\n") || !strings.HasSuffix(string(res.Doc), "\n250\n(50 rows)") {
		t.Fatalf("skip 200: %v %q", err, res.Doc)
	}
	assertPoolIdle(t, e.pool)
}

// TestTSVByteCap: the same rule as JSON. The document stays within
// MaxBytes with room for the footer, the first row that does not fit ends
// the rows, and JSON and TSV agree on the rule (not on the count: TSV rows
// are shorter).
func TestTSVByteCap(t *testing.T) {
	pool := newPool(t, 1, true)
	e := newExec(t, pool, Options{MaxBytes: 1024, Format: FormatTSV})
	const q = "SELECT g, repeat('x', 100) AS pad FROM generate_series(1, 100) g"
	res, d := runTSV(t, e, q)
	if res.TruncatedBy != "bytes" || res.Rows == 0 || res.Rows >= 100 || len(res.Doc) > 1024 ||
		d.footer != "("+strconv.Itoa(res.Rows)+" rows, truncated by bytes)" || len(d.rows) != res.Rows {
		t.Fatalf("rows %d by %q len %d: %q", res.Rows, res.TruncatedBy, len(res.Doc), res.Doc)
	}
	// One more row would not have fitted.
	footer := len("\n") + len(d.footer)
	perRow := len("\n"+strconv.Itoa(res.Rows+1)+"\t") + 100
	if len(res.Doc)-footer+perRow <= 1024-trailerRoom {
		t.Fatalf("stopped early: %d bytes", len(res.Doc))
	}
	// The JSON executor with the same limits stops by the same rule.
	jres := run(t, e.WithFormat(FormatJSON), q)
	if jres.TruncatedBy != "bytes" || len(jres.JSON) > 1024 || len(jres.JSON)-len(`],"row_count":8,"truncated":true,"truncated_by":"bytes"}`)+
		len(`,[10,"`)+100+len(`"]`) <= 1024-trailerRoom {
		t.Fatalf("JSON: %d rows (TSV %d), %d bytes", jres.Rows, res.Rows, len(jres.JSON))
	}
	// A first row that does not fit leaves header and footer.
	res, _ = runTSV(t, e, "SELECT repeat('y', 2000) AS big")
	if string(res.Doc) != "big:text\n(0 rows, truncated by bytes)" || res.TruncatedBy != "bytes" {
		t.Fatalf("%q", res.Doc)
	}
	// Many more rows than fit: later rows are read but not copied.
	e2 := newExec(t, pool, Options{MaxBytes: 1024, MaxRows: 100000, Format: FormatTSV})
	res, _ = runTSV(t, e2, "SELECT g, repeat('x', 100) AS pad FROM generate_series(1, 100000) g")
	if res.TruncatedBy != "bytes" || len(res.Doc) > 1024 {
		t.Fatalf("%+v", res)
	}
	// A header longer than MaxBytes is still written, with no rows.
	wide := make([]string, 100)
	for i := range wide {
		wide[i] = strconv.Itoa(i) + " AS a_rather_long_column_name_" + strconv.Itoa(i)
	}
	res, d = runTSV(t, e, "SELECT "+strings.Join(wide, ", "))
	if len(d.header) != 100 || len(d.rows) != 0 || d.footer != "(0 rows, truncated by bytes)" {
		t.Fatalf("wide header: %+v", d)
	}
	assertPoolIdle(t, pool)
}

func TestWithFormat(t *testing.T) {
	pool := newPool(t, 1, true)
	if _, err := New(pool, allowAll{}, Options{Format: numFormats}); err == nil {
		t.Error("an unknown format was accepted")
	}
	e := newExec(t, pool, Options{MaxRows: 3, MaxValueBytes: 1000, MaxBytes: 1 << 20})
	tsv := e.WithFormat(FormatTSV)
	if e.WithFormat(FormatJSON) != e || tsv.WithFormat(FormatJSON) != e || tsv.WithFormat(FormatTSV) != tsv || e.WithFormat(numFormats) != e {
		t.Fatal("WithFormat does not return the siblings")
	}
	if tsv.opts.MaxRows != 3 || tsv.opts.Format != FormatTSV || e.opts.Format != FormatJSON {
		t.Fatalf("options %+v / %+v", e.opts, tsv.opts)
	}
	res, d := runTSV(t, tsv, "SELECT g FROM generate_series(1, 5) g")
	if res.Rows != 3 || d.footer != "(3 rows, truncated by rows)" {
		t.Fatalf("%q", res.Doc)
	}
	if jres := run(t, e, "SELECT 1"); string(jres.Doc) != string(jres.JSON) {
		t.Fatalf("JSON: Doc %q, JSON %q", jres.Doc, jres.JSON)
	}
	// A row message above the wire limit costs the connection; both
	// formats count it.
	if _, err := tsv.Run(testCtx(t), "SELECT repeat('x', 5000) AS body", nil, nil); err == nil {
		t.Fatal("a 5000-byte value was accepted")
	}
	if e.DestroyedConns() != 1 || tsv.DestroyedConns() != 1 {
		t.Fatalf("destroyed %d / %d, want 1", e.DestroyedConns(), tsv.DestroyedConns())
	}
	if FormatTSV.String() != "tsv" || FormatJSON.String() != "json" {
		t.Error("Format.String")
	}
	assertPoolIdle(t, pool)
}

// FuzzTSVLines: whatever the values, the document splits on its newlines
// into the header, one line per row and the footer, every row has one
// field per column, and unescaping gives the values back (invalid UTF-8 as
// U+FFFD, bpchar without its pad).
func FuzzTSVLines(f *testing.F) {
	f.Add("a", "x\ty", "b\nc", uint8(0), uint8(2))
	f.Add("", "", "\\N", uint8(1), uint8(3))
	f.Add("n\\", "\r\n\b\f\v\x00", "pad   ", uint8(2), uint8(1))
	f.Add("(1 rows)", "\xff\xfe", " ", uint8(3), uint8(0))
	f.Fuzz(func(t *testing.T, name, v1, v2 string, nulls, nrows uint8) {
		cols := []colInfo{
			{nameOff: 0, nameLen: len(name), typ: types[25]},
			{nameOff: 0, nameLen: len(name), typ: types[1042]},
		}
		names := []byte(name)
		doc := appendTSVHeader(nil, cols, names)
		n := int(nrows % 5)
		for i := range n {
			vals := [][]byte{[]byte(v1), []byte(v2)}
			if nulls&(1<<i) != 0 {
				vals[i%2] = nil
			}
			var ok bool
			if doc, ok = appendTSVRow(doc, 0, 1<<20, vals, cols); !ok {
				t.Fatal("row did not fit")
			}
		}
		doc = appendTSVFooter(doc, n, "")
		if !utf8.Valid(doc) {
			t.Fatalf("invalid UTF-8: %q", doc)
		}
		d := parseTSV(t, string(doc))
		wantName := validUTF8(name)
		if len(d.header) != 2 || d.header[0] != wantName+":text" || d.header[1] != wantName+":bpchar" {
			t.Fatalf("header %q from %q", d.header, doc)
		}
		if len(d.rows) != n || d.footer != "("+strconv.Itoa(n)+" rows)" {
			t.Fatalf("%d rows, footer %q, want %d: %q", len(d.rows), d.footer, n, doc)
		}
		for i, row := range d.rows {
			want := []string{validUTF8(v1), strings.TrimRight(validUTF8(v2), " ")}
			for j, v := range row {
				null := nulls&(1<<i) != 0 && i%2 == j
				switch {
				case null && v != nil, !null && v == nil:
					t.Fatalf("row %d col %d: NULL %v, got %v", i, j, null, v)
				case v != nil && *v != want[j]:
					t.Fatalf("row %d col %d: %q, want %q", i, j, *v, want[j])
				}
			}
		}
	})
}

// validUTF8 replaces each byte of invalid UTF-8 with U+FFFD, as the
// serializer does.
func validUTF8(s string) string { return string([]rune(s)) }
