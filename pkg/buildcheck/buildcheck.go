// Package buildcheck holds test helpers that guard how tools are built.
package buildcheck

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// CgoHeavy lists import path prefixes of the cgo libraries that pure tools
// must never pull in: they would break CGO_ENABLED=0 builds and add minutes
// of C compilation.
var CgoHeavy = []string{"github.com/pganalyze/pg_query_go", "github.com/duckdb/duckdb-go", "github.com/marcboeker/go-duckdb"}

// Deps returns `go list -deps` of the package in dir.
func Deps(dir string) ([]string, error) {
	cmd := exec.Command("go", "list", "-deps", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go list -deps in %s: %w\n%s", dir, err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		return nil, fmt.Errorf("go list -deps in %s printed nothing", dir)
	}
	return deps, nil
}

// Forbidden returns the deps that start with any of the prefixes.
func Forbidden(deps, prefixes []string) []string {
	var bad []string
	for _, d := range deps {
		for _, p := range prefixes {
			if strings.HasPrefix(d, p) {
				bad = append(bad, d)
				break
			}
		}
	}
	return bad
}

// ForbidDeps fails the test when the package in the current directory
// depends on a package under any of the prefixes.
func ForbidDeps(t *testing.T, prefixes ...string) {
	t.Helper()
	deps, err := Deps(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range Forbidden(deps, prefixes) {
		t.Errorf("dependency %s is forbidden in this tool", d)
	}
}
