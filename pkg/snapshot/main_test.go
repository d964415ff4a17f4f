package snapshot

import (
	"testing"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
