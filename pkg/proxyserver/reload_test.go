package proxyserver

import (
	"os"
	"path/filepath"
	"testing"
)

// A reload (or the console's SET of auth_file to nothing) whose settings lost
// auth_file would turn a proxy that checks passwords into one that
// trusts every client: it is refused, and the users stay checked.
func TestReloadKeepsAuthFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "users.txt")
	if err := os.WriteFile(p, []byte("\"alice\" \"secret\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := valid()
	c.AuthFile = p
	c.AdminUsers = []string{"admin"}
	c.ConsoleDatabase = "pgbouncer"
	s, err := New(Options{Config: c})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.credential("mallory", "postgres"); err == nil {
		t.Fatal("an unknown user is let in before the reload")
	}
	nc := c
	nc.AuthFile = ""
	if err := s.apply(nc); err == nil {
		t.Error("a reload without auth_file was applied")
	}
	if err := s.set("auth_file", ""); err == nil {
		t.Error("SET auth_file = '' was applied")
	}
	if cred, err := s.credential("mallory", "postgres"); err == nil {
		t.Errorf("after a reload without auth_file an unknown user gets %+v", cred.Method)
	}
	if _, err := s.credential("alice", "postgres"); err != nil {
		t.Errorf("alice after the refused reload: %v", err)
	}
}
