package mcpserver

import (
	"bytes"
	"regexp"
	"testing"
	"time"
)

func TestRateLimit(t *testing.T) {
	var buf bytes.Buffer
	a := NewAuditor(&buf, 0)
	c := newClient(t, Config{RateLimit: 1, Audit: a})
	if text, isErr := call(t, c, "run_select", map[string]any{"sql": "SELECT 1"}); isErr {
		t.Fatal(text)
	}
	text, isErr := call(t, c, "run_select", map[string]any{"sql": "SELECT 2"})
	if !isErr || !regexp.MustCompile(`^rate limit exceeded: retry in [0-9]+ms$`).MatchString(text) {
		t.Fatalf("second call: %v %q", isErr, text)
	}
	// Another session has its own bucket.
	other := newClient(t, Config{RateLimit: 1})
	if text, isErr := call(t, other, "list_schemas", nil); isErr {
		t.Errorf("other session: %s", text)
	}
	recs := auditRecords(t, a, &buf)
	if len(recs) != 2 || recs[1].Verdict != VerdictRateLimited || recs[1].SQL != "SELECT 2" || recs[1].Error != text {
		t.Errorf("audit: %+v", recs)
	}
}

func TestLimiters(t *testing.T) {
	l := newLimiters(2) // burst 2
	now := time.Now()
	if l.wait("a", now) != 0 || l.wait("a", now) != 0 {
		t.Fatal("burst of 2 refused")
	}
	if d := l.wait("a", now); d <= 0 || d > 500*time.Millisecond {
		t.Errorf("third call waits %v, want (0, 500ms]", d)
	}
	if l.wait("b", now) != 0 {
		t.Error("key b limited by a")
	}
	if d := l.wait("a", now.Add(500*time.Millisecond)); d != 0 {
		t.Errorf("after 500ms: wait %v", d)
	}
	if newLimiters(0).wait("a", now) != 0 {
		t.Error("rate 0 limits")
	}
	if rateLimitText(119100*time.Microsecond) != "rate limit exceeded: retry in 120ms" {
		t.Error(rateLimitText(119100 * time.Microsecond))
	}
}
