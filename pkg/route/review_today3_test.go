// Review of today's changes to Targets' URL parameters.

package route

import (
	"fmt"
	"testing"
)

// A URL parameter value with a ';' (a password, application_name) is
// valid for libpq and pgx, which split the query on '&' only. Before
// today, a URL without qprouter's own parameters went to pgx as written.
// takeOwnParams now reads every URL with url.ParseQuery, which refuses a
// ';' ("invalid semicolon separator in query"), so NewTargets (and with it
// the start or a reload) refuses such a server URL.
func TestToday3ReviewSemicolonInURLParameter(t *testing.T) {
	c := rvCluster(t)
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&application_name=billing;worker", c.Port)
	tg, err := NewTargets("", map[string]string{"app": url})
	if err != nil {
		t.Fatalf("NewTargets refuses %s, which libpq and pgx accept: %v", url, err)
	}
	if got := rvSetting(t, tg.Connector(nil), "app", "postgres", "application_name"); got != "billing;worker" {
		t.Errorf("application_name %q, want %q", got, "billing;worker")
	}
}
