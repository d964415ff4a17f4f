package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const (
	samplesFile = "../../pkg/perf/testdata/perfstat-samples.jsonl"
	oldFile     = "../../pkg/perf/testdata/perfstat-old.jsonl"
	newFile     = "../../pkg/perf/testdata/perfstat-new.jsonl"
)

// call runs the CLI in-process with stdin.
func call(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSummaryDeterministic(t *testing.T) {
	code, a, errs := call(t, "", "--resamples", "2000", samplesFile)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	_, b, _ := call(t, "", "--resamples", "2000", samplesFile)
	if a != b {
		t.Error("two runs differ")
	}
	// stdin gives the same output as the file.
	_, c, _ := call(t, readFile(t, samplesFile), "--resamples", "2000")
	if a != c {
		t.Error("stdin and file differ")
	}
	_, d, _ := call(t, "", "--resamples", "2000", "--seed", "2", samplesFile)
	if a == d {
		t.Error("--seed 2 changed nothing")
	}
	lines := strings.Split(strings.TrimSuffix(a, "\n"), "\n")
	run, _, _ := strings.Cut(readFile(t, samplesFile), "\n")
	if lines[0] != run {
		t.Errorf("first line is not the run record copied:\n%s", lines[0])
	}
	if len(lines) != 1+12+6+3 {
		t.Errorf("%d lines", len(lines))
	}
	for _, want := range []string{`"type":"stat"`, `"resamples":2000`, `"ci_level":0.95`, `"p50_ns":120000`} {
		if !strings.Contains(a, want) {
			t.Errorf("output lacks %s", want)
		}
	}
}

func TestSummaryText(t *testing.T) {
	code, out, errs := call(t, "", "--format", "text", "--resamples", "500", "--tolerance", "0.5", "--floor-ns", "0", samplesFile)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{
		"intervals: 95% percentile bootstrap, 500 resamples, seed 1; t_db tolerance 50.0% or 0ns",
		"160µs matches native", // select1 passes on the 50% tolerance without the floor
		"1.30ms matches native",
		"+200µs [",
		"notes:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}

func TestCompare(t *testing.T) {
	code, out, errs := call(t, "", "--compare", "--format", "text", oldFile, newFile)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if !strings.Contains(out, "+27.4%") || !strings.Contains(out, "~") {
		t.Errorf("compare text:\n%s", out)
	}
	// The groups only one side has are logged.
	if !strings.Contains(errs, "only in the new run") || !strings.Contains(errs, "level=WARN") {
		t.Errorf("stderr %q", errs)
	}
	code, out, _ = call(t, "", "--compare", "--alpha", "0.01", oldFile, newFile)
	if code != 0 || strings.Count(out, `"type":"compare"`) != 2 || !strings.Contains(out, `"alpha":0.01`) {
		t.Errorf("exit %d, compare json:\n%s", code, out)
	}
	// OLD may come from stdin.
	code, out2, _ := call(t, readFile(t, oldFile), "--compare", "--alpha", "0.01", "-", newFile)
	if code != 0 || out2 != out {
		t.Errorf("stdin OLD: exit %d", code)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	run, _, _ := strings.Cut(readFile(t, samplesFile), "\n")
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.jsonl", run+"\n"+`{"type":"sample","version":"1.0","path":"native"`+"\n")
	code, out, errs := call(t, "", bad)
	if code != 2 || out != "" || errs != "perfstat: "+bad+":2: bad record: unexpected end of JSON input\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, _, errs = call(t, run+"\n"+`{"type":"sample","version":"2.0"}`+"\n")
	if code != 2 || errs != "perfstat: -:2: bad record: unsupported version 2.0 (this reader knows 1.x)\n" {
		t.Errorf("stdin: exit %d, stderr %q", code, errs)
	}
	noRun := write("norun.jsonl", `{"type":"end","version":"1.0"}`+"\n")
	if code, _, errs = call(t, "", noRun); code != 2 || !strings.Contains(errs, "norun.jsonl: no run record") {
		t.Errorf("no run: exit %d, stderr %q", code, errs)
	}
	if code, _, errs = call(t, ""); code != 2 || errs != "perfstat: -: no run record; a samples file starts with one\n" {
		t.Errorf("empty stdin: exit %d, stderr %q", code, errs)
	}
	other := write("other.jsonl", strings.Replace(run, "0badc0de", "00000000", 1)+"\n")
	if code, _, errs = call(t, "", samplesFile, other); code != 2 || !strings.Contains(errs, "differs from") {
		t.Errorf("two runs: exit %d, stderr %q", code, errs)
	}
	if code, _, errs = call(t, "", filepath.Join(dir, "missing.jsonl")); code != 2 || !strings.Contains(errs, "no such file") {
		t.Errorf("missing file: exit %d, stderr %q", code, errs)
	}
}

func TestInterruptedRunIsLogged(t *testing.T) {
	in := readFile(t, samplesFile)
	in = in[:strings.LastIndex(strings.TrimSuffix(in, "\n"), "\n")+1] // drop the end record
	code, out, errs := call(t, in, "--resamples", "10")
	if code != 0 || out == "" || !strings.Contains(errs, "level=WARN") || !strings.Contains(errs, "no end record") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--resamples", "0"}, "perfstat: --resamples 0 must be at least 1\n"},
		{[]string{"--ci", "1"}, "perfstat: --ci 1 must be between 0 and 1 (exclusive)\n"},
		{[]string{"--tolerance=-0.1"}, "perfstat: --tolerance -0.1 must be a number >= 0\n"},
		{[]string{"--floor-ns=-1"}, "perfstat: --floor-ns -1 must not be negative\n"},
		{[]string{"--compare", "--alpha", "2", oldFile, newFile}, "perfstat: --alpha 2 must be between 0 and 1\n"},
		{[]string{"--compare", oldFile}, "perfstat: --compare takes two files, OLD and NEW (got 1)\n"},
		{[]string{"-", "-"}, "perfstat: stdin (\"-\") can be read only once\n"},
	} {
		code, out, errs := call(t, "", c.args...)
		if code != 2 || errs != c.msg || out != "" {
			t.Errorf("%q: exit %d, stderr %q; want 2, %q", c.args, code, errs, c.msg)
		}
	}
	for _, args := range [][]string{{"--format", "xml"}, {"--bogus"}, {"--seed", "x"}} {
		code, _, errs := call(t, "", args...)
		if code != 2 || !strings.HasPrefix(errs, "perfstat: ") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q", args, code, errs)
		}
	}
	code, out, _ := call(t, "", "--help")
	if code != 0 || !strings.Contains(out, "Exit status: 0 success") || !strings.Contains(out, "--floor-ns") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}

// epipeWriter fails like a pipe whose reader went away.
type epipeWriter struct{}

func (epipeWriter) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

func TestOutputErrors(t *testing.T) {
	var errb bytes.Buffer
	if code := run([]string{"--resamples", "10", samplesFile}, strings.NewReader(""), epipeWriter{}, &errb); code != 0 || errb.Len() != 0 {
		t.Errorf("EPIPE: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"--resamples", "10", samplesFile}, strings.NewReader(""), failWriter{}, &errb); code != 1 || !strings.Contains(errb.String(), "no space left") {
		t.Errorf("ENOSPC: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"--compare", "--format", "text", oldFile, newFile}, strings.NewReader(""), epipeWriter{}, io.Discard); code != 0 {
		t.Errorf("compare EPIPE: exit %d", code)
	}
}
