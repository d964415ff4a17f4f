// Package npmtest installs the npm packages a test drives with node.
//
// A testdata directory holds package.json, package-lock.json (pinning every
// package) and the scripts that use them. The packages are installed with
// "npm ci" once per lockfile into a cache directory shared by every test
// process and run ($XDG_CACHE_HOME/qpkit-npm/<hash of package.json,
// package-lock.json and .npmrc>); each test gets a copy of the scripts next
// to a node_modules link into that cache, so editing a script never
// reinstalls.
//
// Typical use:
//
//	dir := npmtest.Dir(t, filepath.Join("testdata", "npm"))
//	cmd := exec.Command("node", filepath.Join(dir, "script.js"))
package npmtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// InstallTimeout bounds one "npm ci".
const InstallTimeout = 5 * time.Minute

// keyFiles are the files of a source directory that decide what is
// installed; .npmrc is optional.
var keyFiles = []string{"package.json", "package-lock.json", ".npmrc"}

var (
	mu        sync.Mutex
	installed = map[string]*install{} // by absolute source directory
)

type install struct {
	once    sync.Once
	modules string
	err     error
}

// Dir returns a fresh directory (removed when t ends) holding copies of
// the regular files of src and a node_modules link to the packages of
// src's package-lock.json, installed by Install. It fails t when node or
// npm is not on PATH or the install fails: a test that needs node should
// not pass quietly without it.
func Dir(t testing.TB, src string) string {
	t.Helper()
	for _, prog := range []string{"node", "npm"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Fatalf("this test needs node and npm (node >= 20) on PATH: %s: %v", prog, err)
		}
	}
	modules, err := Install(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := copyFiles(src, dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Install returns the node_modules directory for src's package-lock.json,
// running "npm ci" in the cache unless this process or an earlier one
// already did. Concurrent callers in one process share one install; two
// processes may both install, and the first to finish wins.
func Install(src string) (string, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	mu.Lock()
	in := installed[abs]
	if in == nil {
		in = &install{}
		installed[abs] = in
	}
	mu.Unlock()
	in.once.Do(func() { in.modules, in.err = installDir(abs) })
	return in.modules, in.err
}

// installDir does Install's work for the absolute directory src.
func installDir(src string) (string, error) {
	h := sha256.New()
	files := map[string][]byte{}
	for _, name := range keyFiles {
		b, err := os.ReadFile(filepath.Join(src, name))
		if os.IsNotExist(err) && name == ".npmrc" {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("npm packages of %s: %w", src, err)
		}
		files[name] = b
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	root := filepath.Join(base, "qpkit-npm")
	dir := filepath.Join(root, "lock-"+hex.EncodeToString(h.Sum(nil))[:16])
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err == nil {
		return modules, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(root, "tmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // gone after the rename below
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), InstallTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci for %s: %v\n%s", src, err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".installed"), nil, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process may have installed it meanwhile.
		if _, serr := os.Stat(filepath.Join(dir, ".installed")); serr != nil {
			return "", err
		}
	}
	return modules, nil
}

// copyFiles copies the regular files of src (not its subdirectories or a
// node_modules there) into dst.
func copyFiles(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
