package npmtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A package without dependencies installs offline; the script runs from
// the copy, and a second Dir shares the install.
func TestDir(t *testing.T) {
	src := filepath.Join("testdata", "empty")
	dir := Dir(t, src)
	out, err := exec.Command("node", filepath.Join(dir, "hello.js")).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "hello from ") {
		t.Fatalf("node hello.js: %v: %s", err, out)
	}
	link, err := os.Readlink(filepath.Join(dir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(link), ".installed")); err != nil {
		t.Errorf("node_modules links to %s, not an install: %v", link, err)
	}
	dir2 := Dir(t, src)
	if link2, _ := os.Readlink(filepath.Join(dir2, "node_modules")); dir2 == dir || link2 != link {
		t.Errorf("second Dir: %s -> %s, first %s -> %s", dir2, link2, dir, link)
	}
}

func TestInstallNeedsLockfile(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "package.json"), []byte(`{"private": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(src); err == nil || !strings.Contains(err.Error(), "package-lock.json") {
		t.Errorf("no lockfile: %v", err)
	}
}
