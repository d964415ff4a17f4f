package main

import (
	"testing"

	"github.com/qpkit/qpkit/pkg/buildcheck"
)

func TestNoCgoDependencies(t *testing.T) { buildcheck.ForbidDeps(t, buildcheck.CgoHeavy...) }
