package proxyserver

import (
	"strings"
	"testing"
	"time"
)

// A shutdown_timeout below zero would make SIGTERM cut every client at
// once instead of draining: the config check and the console's SET
// refuse it, and values no Duration holds.
func TestNegativeShutdownTimeoutRefused(t *testing.T) {
	c := valid()
	c.AdminUsers = []string{"admin"}
	c.ConsoleDatabase = "pgbouncer"
	s, err := New(Options{Config: c})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"-5s", "-5", "NaN", "Inf", "1e300"} {
		if err := s.set("shutdown_timeout", v); err == nil {
			got, _ := s.get()
			t.Errorf("SET shutdown_timeout = %s accepted: shutdown_timeout is now %v", v, got.ShutdownTimeout)
		}
	}
	if err := s.set("shutdown_timeout", "2.5"); err != nil {
		t.Errorf("SET shutdown_timeout = 2.5: %v", err)
	} else if got, _ := s.get(); got.ShutdownTimeout != 2500*time.Millisecond {
		t.Errorf("SET shutdown_timeout = 2.5: %v", got.ShutdownTimeout)
	}
	bad := valid()
	bad.ShutdownTimeout = -time.Second
	if bad.Check() == nil {
		t.Error("Check accepts shutdown_timeout = -1s")
	}
}

// SHOW CONFIG lists server_reset_query and max_prepared_statements as
// changeable; PgBouncer's values that mean nothing to qprouter are
// refused saying why, not as unknown settings.
func TestSetKeysWithoutUse(t *testing.T) {
	c := valid()
	c.AdminUsers = []string{"admin"}
	c.ConsoleDatabase = "pgbouncer"
	s, err := New(Options{Config: c})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, kv := range s.consoleConfig() {
		listed[kv.Key] = kv.Changeable
	}
	for _, kv := range [][3]string{
		{"server_reset_query", "", "qprouter resets with DISCARD ALL"},
		{"max_prepared_statements", "0", "qprouter supports prepared statements"},
	} {
		if !listed[kv[0]] {
			t.Errorf("SHOW CONFIG does not list %s as changeable", kv[0])
		}
		err := s.set(kv[0], kv[1])
		if err == nil || !strings.Contains(err.Error(), "changes nothing") || !strings.Contains(err.Error(), kv[2]) {
			t.Errorf("SET %s = '%s': %v, want why it changes nothing", kv[0], kv[1], err)
		}
	}
	if err := s.set("server_reset_query", "DISCARD ALL; SELECT 1"); err != nil {
		t.Errorf("SET server_reset_query to a query: %v", err)
	}
}
