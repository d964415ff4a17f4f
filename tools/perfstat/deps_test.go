package main

import (
	"testing"

	"github.com/qpkit/qpkit/pkg/buildcheck"
)

// perfstat must stay buildable with CGO_ENABLED=0.
func TestNoCgoDependencies(t *testing.T) { buildcheck.ForbidDeps(t, buildcheck.CgoHeavy...) }
