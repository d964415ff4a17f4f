package buildcheck

import (
	"slices"
	"testing"
)

// The checker must see this package's own dependencies, or it could never
// fail.
func TestDepsSeesImports(t *testing.T) {
	deps, err := Deps(".")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(deps, "os/exec") {
		t.Errorf("deps %v miss os/exec, which this package imports", deps)
	}
	if bad := Forbidden(deps, []string{"os/"}); !slices.Contains(bad, "os/exec") {
		t.Errorf("Forbidden did not flag os/exec: %v", bad)
	}
	if bad := Forbidden(deps, CgoHeavy); len(bad) != 0 {
		t.Errorf("unexpected cgo deps %v", bad)
	}
}
