package cmdline

import (
	"bytes"
	"strings"
	"testing"
)

type grammar struct {
	N int `help:"A number." default:"1"`
}

func TestParse(t *testing.T) {
	var g grammar
	var out, errb bytes.Buffer
	kctx, exited, _, err := Parse(&g, "demo", "Demo tool.", []string{"--n", "7"}, &out, &errb)
	if err != nil || exited || kctx == nil || g.N != 7 {
		t.Fatalf("parse: ctx %v exited %v err %v n %d", kctx, exited, err, g.N)
	}
	_, exited, code, err := Parse(&grammar{}, "demo", "Demo tool.", []string{"--help"}, &out, &errb)
	if err != nil || !exited || code != 0 || !strings.Contains(out.String(), "Demo tool.") {
		t.Errorf("--help: exited %v code %d err %v output %q", exited, code, err, out.String())
	}
	if _, _, _, err := Parse(&grammar{}, "demo", "", []string{"--n", "x"}, &out, &errb); err == nil {
		t.Error("bad --n parsed without error")
	}
}

func TestOneLine(t *testing.T) {
	if got := OneLine("  first\nsecond\n"); got != "first" {
		t.Errorf("OneLine = %q", got)
	}
}
