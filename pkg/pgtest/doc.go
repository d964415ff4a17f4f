// Package pgtest starts throwaway PostgreSQL clusters for tests, benchmarks
// and the pg-sandbox command.
//
// A cluster lives in a fresh temporary directory, listens on 127.0.0.1 at a
// free port and on a unix socket inside that directory, trusts every local
// connection and runs with durability switched off (fsync,
// synchronous_commit and full_page_writes off) because its data is
// disposable.
//
// initdb and postgres refuse to run as root, so when the caller is root the
// server programs run as the unprivileged "postgres" user (or "nobody"),
// which is given the directory.
//
// Cleanup does not depend on the caller exiting cleanly: every cluster
// started for a test has a watchdog process holding the read end of a pipe
// whose write end only the test binary holds. When the binary ends for any
// reason (success, failure, panic, Ctrl-C, SIGKILL) the kernel closes the
// pipe and the watchdog stops the server and deletes the directory.
//
// Typical use:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		db := pgtest.Shared(t)            // one cluster per package
//		url := db.URL()
//		...
//	}
package pgtest
