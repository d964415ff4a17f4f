package mcpserver

import (
	"bytes"
	"net/http/httptest"
	"regexp"
	"strings"
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

// TestRateLimitsBothBuckets checks that a call must pass its session's and
// its principal's bucket, and that a refused call is counted in neither.
func TestRateLimitsBothBuckets(t *testing.T) {
	r := rateLimits{session: newLimiters(1), principal: newLimiters(2)}
	now := time.Now()
	if r.wait("s1", "p", now) != 0 {
		t.Fatal("first call refused")
	}
	if r.wait("s1", "p", now) == 0 {
		t.Fatal("second call of session s1 allowed with 1/s")
	}
	// The refused call took no principal token: one is left for s2.
	if r.wait("s2", "p", now) != 0 {
		t.Fatal("call of s2 refused; the refused s1 call used the principal's token")
	}
	// The principal's bucket is empty now; s3's own token must be handed back.
	if r.wait("s3", "p", now) == 0 {
		t.Fatal("third call of principal p allowed with burst 2")
	}
	later := now.Add(500 * time.Millisecond) // one principal token back, s3 untouched
	if d := r.wait("s3", "p", later); d != 0 {
		t.Fatalf("s3 after 500ms waits %v: its refused call kept its session token", d)
	}
	// Sessionless calls have only the principal's bucket.
	q := rateLimits{session: newLimiters(1), principal: newLimiters(3)}
	for i := range 3 {
		if d := q.wait("", "stdio", now); d != 0 {
			t.Fatalf("sessionless call %d waits %v", i, d)
		}
	}
}

// TestRateLimitPerPrincipalOverHTTP checks that two HTTP clients sharing a
// token share one bucket: new sessions buy no extra calls.
func TestRateLimitPerPrincipalOverHTTP(t *testing.T) {
	ts := httptest.NewServer(NewHTTPHandler(newServer(t, Config{RateLimit: 1}), HTTPOptions{Token: "s3cret"}))
	defer ts.Close()
	auth := map[string]string{"Authorization": "Bearer s3cret"}
	a, b := httpClient(t, ts, auth), httpClient(t, ts, auth)
	if text, isErr := call(t, a, "run_select", map[string]any{"sql": "SELECT 1"}); isErr {
		t.Fatal(text)
	}
	text, isErr := call(t, b, "run_select", map[string]any{"sql": "SELECT 1"})
	if !isErr || !strings.HasPrefix(text, "rate limit exceeded: retry in ") {
		t.Fatalf("second client's call: %v %q", isErr, text)
	}
}
