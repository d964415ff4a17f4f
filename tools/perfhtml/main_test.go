package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture is pkg/perf's sample summary.
const fixture = "../../pkg/perf/testdata/summary-fixture.jsonl"

// call runs the CLI in-process.
func call(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestStdinFileAndOut(t *testing.T) {
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	code, page, msg := call(t, string(data))
	if code != 0 || msg != "" || !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.Contains(page, "20261129T235904Z-1a2b3c4d") {
		t.Fatalf("stdin: exit %d, stderr %q, %d bytes", code, msg, len(page))
	}
	code, fromFile, msg := call(t, "", fixture)
	if code != 0 || msg != "" || fromFile != page {
		t.Errorf("FILE: exit %d, stderr %q, same page %v", code, msg, fromFile == page)
	}
	out := filepath.Join(t.TempDir(), "perf.html")
	code, stdout, msg := call(t, "", fixture, "-o", out)
	written, err := os.ReadFile(out)
	if code != 0 || msg != "" || stdout != "" || err != nil || string(written) != page {
		t.Errorf("-o: exit %d, stderr %q, stdout %d bytes, read %v, same page %v", code, msg, len(stdout), err, string(written) == page)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".perf.html.*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestEmptyInput(t *testing.T) {
	code, page, msg := call(t, "")
	if code != 0 || msg != "" || !strings.Contains(page, "No run record in this file") {
		t.Errorf("empty input: exit %d, stderr %q", code, msg)
	}
}

func TestErrors(t *testing.T) {
	run := `{"type":"run","version":"1.0","run_id":"r"}` + "\n"
	cases := []struct {
		name, stdin string
		args        []string
		code        int
		msg         string
	}{
		{"bad record", run + `{"type":"stat"}` + "\n", nil, 2, "perfhtml: -:2: bad record: version missing\n"},
		{"not json", "hello\n", nil, 2, "perfhtml: -:1: bad record: not a JSON object\n"},
		{"new major version", `{"type":"run","version":"2.0","run_id":"r"}`, nil, 2, "perfhtml: -:1: bad record: unsupported version 2.0 (this reader knows 1.x)\n"},
		{"missing file", "", []string{"/nonexistent/summary.jsonl"}, 1, "perfhtml: open /nonexistent/summary.jsonl: no such file or directory\n"},
		{"unwritable out", "", []string{"-o", "/nonexistent/perf.html"}, 1, ""},
		{"unknown flag", "", []string{"--bogus"}, 2, ""},
		{"two files", "", []string{"a", "b"}, 2, ""},
	}
	for _, c := range cases {
		code, stdout, msg := call(t, c.stdin, c.args...)
		if code != c.code || stdout != "" || (c.msg != "" && msg != c.msg) || !strings.HasPrefix(msg, "perfhtml: ") || strings.Count(msg, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q, %d bytes out; want exit %d, %q", c.name, code, msg, len(stdout), c.code, c.msg)
		}
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := call(t, "", "--help")
	if code != 0 || !strings.Contains(out, "Exit status: 0 done; 1 reading or writing failed; 2 bad command line") {
		t.Errorf("--help: exit %d, output %q", code, out)
	}
}
