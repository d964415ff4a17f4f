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

// Passwords never reach the log or the admin API, in any spelling of a
// connection string.
func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@h:5432/db?sslmode=disable":     "postgres://u:xxxxx@h:5432/db?sslmode=disable",
		"postgresql://h/db?password=secret&sslmode=disable": "postgresql://h/db?password=xxxxx&sslmode=disable",
		"host=h password=secret dbname=x":                   "host=h password=xxxxx dbname=x",
		"host=h password = 'se cr''et' dbname=x":            "host=h password = xxxxx dbname=x",
		"postgres://h1:1,h2:2/db?connect_query=SELECT+1":    "postgres://h1:1,h2:2/db?connect_query=SELECT+1",
		// the client key's passphrase, in either form (found by review)
		"postgres://h/db?sslmode=verify-full&sslpassword=secret&application_name=a%20b": "postgres://h/db?sslmode=verify-full&sslpassword=xxxxx&application_name=a%20b",
		"postgres://h/db?SSLPassword=secret":                                            "postgres://h/db?SSLPassword=xxxxx",
		"host=h sslpassword=secret":                                                     "host=h sslpassword=xxxxx",
	} {
		if got := redact(in); got != want || strings.Contains(got, "secret") {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}
