package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestMain lets the test binary act as tpchgen in a child process, for
// behaviour that is per-process (the text pool is built once per process).
func TestMain(m *testing.M) {
	if os.Getenv("TPCHGEN_TEST_AS_MAIN") == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func child(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "TPCHGEN_TEST_AS_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tpchgen %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// The first process writes the cache, the second maps it, and both write
// dbgen's bytes.
func TestTextPoolCacheAcrossProcesses(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "pool")
	args := []string{"--sf", "0.01", "--table", "supplier", "--quiet"}
	plain := child(t, args...)
	first := child(t, append(args, "--text-pool-cache", cache)...)
	st, err := os.Stat(cache)
	if err != nil {
		t.Fatalf("no cache file after the first run: %v", err)
	}
	if st.Size() < 300<<20 {
		t.Errorf("cache file has %d bytes, want the whole 300 MiB pool", st.Size())
	}
	second := child(t, append(args, "--text-pool-cache", cache)...)
	if got := sha(plain); got != "9dc1002ee774699a092ed83ba278caf466d62a15d7e35bb6ed9293475528734b" {
		t.Errorf("supplier SF 0.01 sha256 %s, want dbgen's", got)
	}
	if !bytes.Equal(first, plain) || !bytes.Equal(second, plain) {
		t.Error("output with the text pool cache differs from output without it")
	}
}
