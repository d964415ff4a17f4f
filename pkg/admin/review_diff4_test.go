package admin

// Review of 1f02b37 (labelValue: pool names made valid UTF-8).

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func rv4Scrape(t *testing.T, s *Server) string {
	t.Helper()
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d\n%.300s", w.Code, w.Body.String())
	}
	return w.Body.String()
}

// In a LATIN1 cluster the databases "café" (caf\xe9) and "cafè" (caf\xe8)
// are two databases, two pools; labelValue maps both names to the same
// label "caf\uFFFD/u". When the sweeper removes the idle one
// (ForgetPool), the label's series are deleted under the other, live
// pool, whose cached children (metrics.pool) keep counting into series no
// longer registered: its queries vanish from /metrics for good.
func TestDiff4ReviewForgetPoolAliasedLabel(t *testing.T) {
	idle, live := "caf\xe9/u", "caf\xe8/u"
	s := New(Options{})
	s.ObserveQuery(idle, "primary", "select 1", time.Millisecond, 1, "")
	s.ObserveQuery(live, "primary", "select 1", time.Millisecond, 1, "")
	s.ForgetPool(idle) // swept: unused
	for range 3 {
		s.ObserveQuery(live, "primary", "select 2", time.Millisecond, 1, "")
	}
	body := rv4Scrape(t, s)
	var series []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "sqp_query_duration_seconds_count") {
			series = append(series, l)
		}
	}
	if len(series) == 0 {
		t.Errorf("pool %q ran 3 statements after pool %q was forgotten, yet /metrics has no sqp_query_duration_seconds_count series at all", live, idle)
	}
}
