// The API tests use: Start, Shared and Main.

package pgtest

import (
	"os"
	"sync"
	"testing"
)

var (
	sharedOnce sync.Once
	shared     *Cluster
	sharedErr  error

	liveMu sync.Mutex
	live   []*Cluster
)

// Start starts a cluster for one test and stops it when the test ends. The
// test fails at once when the cluster cannot start.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	opts.Detached = false
	c, err := StartCluster(opts)
	if err != nil {
		t.Fatalf("pgtest: start cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("pgtest: stop cluster: %v", err)
		}
	})
	return c
}

// Shared returns the package's shared cluster, starting it on first use. It
// lives until Main stops it (or, without Main, until the test binary exits,
// when its watchdog removes it). Tests sharing it should use their own
// databases or schemas.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	sharedOnce.Do(func() {
		shared, sharedErr = StartCluster(Options{})
		if sharedErr == nil {
			liveMu.Lock()
			live = append(live, shared)
			liveMu.Unlock()
		}
	})
	if sharedErr != nil {
		t.Fatalf("pgtest: start shared cluster: %v", sharedErr)
	}
	return shared
}

// Main is a package's TestMain: it runs the tests, stops the shared cluster
// and exits with the tests' status.
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	liveMu.Lock()
	for _, c := range live {
		if err := c.Stop(); err != nil {
			os.Stderr.WriteString("pgtest: stop shared cluster: " + err.Error() + "\n")
			if code == 0 {
				code = 1
			}
		}
	}
	liveMu.Unlock()
	os.Exit(code)
}
