package pgwire

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileConfig(t *testing.T) {
	cfg, err := FileConfig("", "", "", false)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := cfg.Credentials("anyone", "db"); err != nil || c.Method != AuthTrust {
		t.Errorf("no auth file: %v %v, want trust", c.Method, err)
	}
	auth := filepath.Join(t.TempDir(), "users.txt")
	if err := os.WriteFile(auth, []byte(`"alice" "secret"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err = FileConfig(auth, "", "", false); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Credentials("bob", "db"); err != ErrUnknownUser {
		t.Errorf("unknown user: %v", err)
	}
	if c, err := cfg.Credentials("alice", "db"); err != nil || c.Method == AuthTrust {
		t.Errorf("alice: %v %v, want a password method", c.Method, err)
	}
	for _, tc := range []struct {
		auth, cert, key string
		require         bool
		want            string
	}{
		{"/nonexistent/users.txt", "", "", false, "auth file"},
		{"", "c.pem", "", false, "go together"},
		{"", "", "", true, "needs a certificate"},
		{"", "/nonexistent/c.pem", "/nonexistent/k.pem", false, "tls"},
	} {
		if _, err := FileConfig(tc.auth, tc.cert, tc.key, tc.require); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("FileConfig(%q, %q, %q, %v) = %v, want an error with %q", tc.auth, tc.cert, tc.key, tc.require, err, tc.want)
		}
	}
}
