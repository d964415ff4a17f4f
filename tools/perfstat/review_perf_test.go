// Pipeline behaviour checked by a review of 2026-12-05; where a test's
// comment names a fault, it is what the code did before the fix.

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Review tests for perfstat's CLI; all pass (verified behaviour).

// CRLF line ends, a last line without newline and a >64 KiB line give the
// same summary as the clean file, from stdin and from a file; stdout holds
// only records, warnings go to stderr.
func TestPerfReviewInputForms(t *testing.T) {
	clean := readFile(t, samplesFile)
	_, want, _ := call(t, "", "--resamples", "200", samplesFile)
	lines := strings.Split(strings.TrimSuffix(clean, "\n"), "\n")
	lines[1] = strings.Replace(lines[1], `"status"`, `"pad":"`+strings.Repeat("p", 100<<10)+`","status"`, 1)
	messy := strings.Join(lines, "\r\n") // no final newline
	path := filepath.Join(t.TempDir(), "messy.jsonl")
	if err := os.WriteFile(path, []byte(messy), 0o644); err != nil {
		t.Fatal(err)
	}
	code, fromFile, errs := call(t, "", "--resamples", "200", path)
	if code != 0 || errs != "" {
		t.Fatalf("file: exit %d, stderr %q", code, errs)
	}
	code, fromStdin, _ := call(t, messy, "--resamples", "200", "-")
	if code != 0 {
		t.Fatalf("stdin: exit %d", code)
	}
	// The run record is copied; the rest must match the clean file's.
	strip := func(s string) string { _, rest, _ := strings.Cut(s, "\n"); return rest }
	if strip(fromFile) != strip(want) || strip(fromStdin) != strip(want) {
		t.Error("CRLF / long line / no final newline changed the summary")
	}
}

// A bad line in the second of two files: exit 2, file:line on stderr,
// nothing on stdout.
func TestPerfReviewBadSecondFileWritesNothing(t *testing.T) {
	run, _, _ := strings.Cut(readFile(t, samplesFile), "\n")
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(run+"\n\n"+`{"type":"sample","version":"1.0","path":"native","query":"q","phase":"warm","concurrency":1,"status":"ok","dur_ns":"x"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := call(t, "", samplesFile, bad)
	if code != 2 || out != "" || !strings.Contains(errs, bad+":3: bad record: sample: field dur_ns") {
		t.Errorf("exit %d, stdout %d bytes, stderr %q", code, len(out), errs)
	}
	code, out, errs = call(t, `{"type":"run","version":"3.1","run_id":"x"}`)
	if code != 2 || out != "" || !strings.Contains(errs, "-:1: bad record: unsupported version 3.1") {
		t.Errorf("newer major: exit %d, stderr %q", code, errs)
	}
}
