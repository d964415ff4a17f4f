// Locating the PostgreSQL server programs.

package pgtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ErrNoServer reports that no PostgreSQL server programs were found.
var ErrNoServer = errors.New("PostgreSQL server programs (initdb, pg_ctl, postgres) not found; install the Debian package 'postgresql' or set PGTEST_BINDIR")

// FindBinDir returns a directory holding initdb, pg_ctl and postgres. It
// tries, in order: $PGTEST_BINDIR, `pg_config --bindir`, the newest
// /usr/lib/postgresql/<major>/bin, and the directory of initdb on PATH.
func FindBinDir() (string, error) {
	var candidates []string
	if d := os.Getenv("PGTEST_BINDIR"); d != "" {
		// The programs run in other directories: a relative name is made
		// absolute from here.
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		if hasServer(d) {
			return d, nil
		}
		return "", fmt.Errorf("PGTEST_BINDIR=%s does not hold initdb, pg_ctl and postgres", d)
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	candidates = append(candidates, debianBinDirs()...)
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		candidates = append(candidates, filepath.Dir(p))
	}
	for _, d := range candidates {
		if hasServer(d) {
			return d, nil
		}
	}
	return "", ErrNoServer
}

// debianBinDirs lists /usr/lib/postgresql/*/bin, newest major version first.
func debianBinDirs() []string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	major := func(d string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(d)), 64)
		return v
	}
	sort.Slice(dirs, func(i, j int) bool { return major(dirs[i]) > major(dirs[j]) })
	return dirs
}

func hasServer(dir string) bool {
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}
