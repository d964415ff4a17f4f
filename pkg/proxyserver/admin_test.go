package proxyserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The admin API's pause and resume: every pool without a name, 404 for a
// pool that does not exist (pools of live clients are tested in
// tools/qprouter).
func TestPauseAPI(t *testing.T) {
	c := valid()
	c.Admin = "127.0.0.1:0"
	s, err := New(Options{Config: c})
	if err != nil {
		t.Fatal(err)
	}
	post := func(path string) (int, string) {
		w := httptest.NewRecorder()
		s.admin.ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, nil))
		return w.Code, w.Body.String()
	}
	for _, path := range []string{"/api/pause?pool=nope/x", "/api/resume?pool=nope/x"} {
		if code, body := post(path); code != http.StatusNotFound || !strings.Contains(body, "unknown pool: nope/x") {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	if code, body := post("/api/pause"); code != http.StatusOK || !s.proxy.Paused() {
		t.Errorf("pause all: %d %s", code, body)
	}
	if code, body := post("/api/resume"); code != http.StatusOK || s.proxy.Paused() {
		t.Errorf("resume all: %d %s", code, body)
	}
}
