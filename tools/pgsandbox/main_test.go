package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func pgsandbox(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestStartURLStop(t *testing.T) {
	state := t.TempDir()
	code, url, stderr := pgsandbox(t, "--state-dir", state, "start", "--set", "work_mem=3MB")
	if code != 0 {
		t.Fatalf("start exited %d: %s", code, stderr)
	}
	url = strings.TrimSpace(url)
	stopped := false
	defer func() {
		if !stopped {
			pgsandbox(t, "--state-dir", state, "stop")
		}
	}()
	if !strings.HasPrefix(url, "postgres://postgres@127.0.0.1:") {
		t.Errorf("start printed %q", url)
	}
	if code, got, _ := pgsandbox(t, "--state-dir", state, "url"); code != 0 || strings.TrimSpace(got) != url {
		t.Errorf("url = %d %q, want %q", code, got, url)
	}
	if code, _, stderr := pgsandbox(t, "--state-dir", state, "start"); code != 1 || !strings.Contains(stderr, "already running") {
		t.Errorf("second start = %d %q, want 1 and 'already running'", code, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(state, "default"))
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSpace(string(raw))
	if code, _, stderr := pgsandbox(t, "--state-dir", state, "stop"); code != 0 {
		t.Fatalf("stop = %d %s", code, stderr)
	}
	stopped = true
	if _, err := os.Stat(base); !os.IsNotExist(err) {
		t.Errorf("cluster directory %s still exists after stop", base)
	}
	if code, _, stderr := pgsandbox(t, "--state-dir", state, "url"); code != 1 || !strings.Contains(stderr, `no sandbox named "default"`) {
		t.Errorf("url after stop = %d %q", code, stderr)
	}
}

func TestBadUsage(t *testing.T) {
	state := t.TempDir()
	for _, args := range [][]string{
		{"--state-dir", state, "--name", "a/b", "url"},
		{"--state-dir", state, "start", "--set", "novalue"},
		{"--state-dir", state, "frobnicate"},
	} {
		if code, _, stderr := pgsandbox(t, args...); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, stderr)
		}
	}
}
