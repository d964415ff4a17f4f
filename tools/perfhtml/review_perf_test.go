// Pipeline behaviour checked by a review of 2026-12-05; where a test's
// comment names a fault, it is what the code did before the fix.

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Review tests for perfhtml's CLI; all pass (verified behaviour).

// Hostile names through the whole record set: no markup or script gets
// through, and the page loads nothing from the network.
func TestPerfReviewHostileNames(t *testing.T) {
	evil := `</script><img src=x onerror=alert(1)>"'`
	q := strings.NewReplacer(`"`, `\"`).Replace(evil)
	in := strings.Join([]string{
		`{"type":"run","version":"1.0","run_id":"r` + q + `","paths":["native","` + q + `"],"queries":[{"id":"` + q + `","weight":"` + q + `","size":"1","sql":"` + q + `"}],"args":["` + q + `"],"postgres":{"version":"` + q + `","settings":{"` + q + `":"` + q + `"}}}`,
		`{"type":"stat","version":"1.0","path":"native","query":"` + q + `","phase":"` + q + `","concurrency":1,"n":30,"p50_ns":1000,"p95_ns":2000,"p99_ns":3000,"p50_ci_ns":[900,1100],"warnings":["` + q + `"]}`,
		`{"type":"stat","version":"1.0","path":"` + q + `","query":"` + q + `","phase":"warm","concurrency":4,"n":30,"p50_ns":1000,"throughput_rps":5}`,
		`{"type":"overhead","version":"1.0","path":"` + q + `","query":"` + q + `","phase":"warm","concurrency":1}`,
		`{"type":"tdb","version":"1.0","query":"` + q + `"}`,
	}, "\n")
	code, page, msg := call(t, in)
	if code != 0 || msg != "" {
		t.Fatalf("exit %d, stderr %q", code, msg)
	}
	for _, bad := range []string{"<img", "</script><", "onerror=alert(1)>", "http://", "https://", "<link", "@import", " src=\"", "<img src"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("%d script elements", n)
	}
	if regexp.MustCompile(`url\(\s*['"]?https?:`).MatchString(page) {
		t.Error("page references an external url()")
	}
}

// A run with no groups renders; a bad record leaves the -o file untouched.
func TestPerfReviewZeroGroupsAndAtomicOut(t *testing.T) {
	code, page, _ := call(t, `{"type":"run","version":"1.0","run_id":"r"}`+"\n")
	if code != 0 || !strings.Contains(page, "No latency statistics in this file") {
		t.Errorf("zero groups: exit %d", code)
	}
	out := filepath.Join(t.TempDir(), "perf.html")
	if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, msg := call(t, `{"type":"run","version":"1.0","run_id":"r"}`+"\n"+`{"type":"stat","version":"1.0"}`+"\n", "-o", out)
	b, _ := os.ReadFile(out)
	if code != 2 || stdout != "" || string(b) != "old" || !strings.Contains(msg, "-:2: bad record") {
		t.Errorf("bad record with -o: exit %d, file %q, stderr %q", code, b, msg)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".perf.html.*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
