package tpch

import (
	"strconv"
	"testing"
)

func TestCSVQuoting(t *testing.T) {
	cases := map[string]string{
		"plain":          "plain",
		"":               "",
		"a,b":            `"a,b"`,
		`say "hi"`:       `"say ""hi"""`,
		"line\nbreak":    "\"line\nbreak\"",
		"cr\r":           "\"cr\r\"",
		`"`:              `""""`,
		"tab\tis fine":   "tab\tis fine",
		"back\\slash ok": "back\\slash ok",
	}
	for in, want := range cases {
		if got := string(appendCSV(nil, []byte(in))); got != want {
			t.Errorf("appendCSV(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCopyEscaping(t *testing.T) {
	cases := map[string]string{
		"plain, text|": "plain, text|",
		"a\tb":         `a\tb`,
		"a\\b":         `a\\b`,
		"a\nb\rc":      `a\nb\rc`,
	}
	for in, want := range cases {
		if got := string(appendCopyText(nil, []byte(in))); got != want {
			t.Errorf("appendCopyText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRowFormats(t *testing.T) {
	for f, want := range map[Format]string{
		FormatTbl:  "-5|12.34|x|1992-01-01|a,b|\n",
		FormatCopy: "-5\t12.34\tx\t1992-01-01\ta,b\n",
		FormatCSV:  "-5,12.34,x,1992-01-01,\"a,b\"\n",
	} {
		r := newRowBuf(f, 0)
		r.int(-5)
		r.money(1234)
		r.char('x')
		r.date(0)
		r.str([]byte("a,b"))
		r.endRow()
		if string(r.b) != want {
			t.Errorf("%s: got %q, want %q", f, r.b, want)
		}
	}
}

func TestMoney(t *testing.T) {
	for cents, want := range map[int64]string{0: "0.00|", 5: "0.05|", -5: "-0.05|", -99999: "-999.99|", 100: "1.00|", 123456789: "1234567.89|"} {
		r := newRowBuf(FormatTbl, 0)
		r.money(cents)
		if string(r.b) != want {
			t.Errorf("money(%d) = %q, want %q", cents, r.b, want)
		}
	}
}

func TestAppendInt(t *testing.T) {
	for _, v := range []int64{0, 7, 10, 99, 100, 12345, -1, -100, 1 << 62, -1 << 63} {
		if got, want := string(appendInt(nil, v)), fmtInt(v); got != want {
			t.Errorf("appendInt(%d) = %s", v, got)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tb := range Tables {
		got, err := ParseTable(tb.String())
		if err != nil || got != tb {
			t.Errorf("ParseTable(%s) = %v, %v", tb, got, err)
		}
	}
	if _, err := ParseTable("lineitems"); err == nil {
		t.Error("ParseTable accepted lineitems")
	}
	for _, f := range []Format{FormatTbl, FormatCopy, FormatCSV} {
		if got, err := ParseFormat(f.String()); err != nil || got != f {
			t.Errorf("ParseFormat(%s) = %v, %v", f, got, err)
		}
	}
	if _, err := ParseFormat("xml"); err == nil {
		t.Error("ParseFormat accepted xml")
	}
}

func fmtInt(v int64) string { return strconv.FormatInt(v, 10) }
