package pgtest

import (
	"strings"
	"testing"
	"time"
)

// checkSettings promises to refuse "a setting name postgresql.conf cannot
// hold" before initdb, so that a bad name is not found only in the
// server's log. It lets through a dot at the end, and a digit right
// after a dot, which PostgreSQL's configuration scanner (guc-file.l:
// QUALIFIED_ID is {ID}"."{ID}, an ID starting with a letter or '_')
// cannot read: the server does not start, and the error is initdb's/the
// server's, not the check's.
func TestToday3ReviewSettingNameCheckLetsThroughUnreadable(t *testing.T) {
	for _, name := range []string{"qpkit.", "qpkit.1x"} {
		start := time.Now()
		c, err := StartCluster(Options{Settings: map[string]string{name: "1"}})
		if err == nil {
			c.Stop()
			continue // PostgreSQL reads it: fine
		}
		if !strings.Contains(err.Error(), "setting name") {
			msg := err.Error()
			if len(msg) > 300 {
				msg = msg[:300] + "..."
			}
			t.Errorf("setting name %q passed checkSettings, then the cluster failed after %s: %s", name, time.Since(start).Round(time.Millisecond), msg)
		}
	}
}
