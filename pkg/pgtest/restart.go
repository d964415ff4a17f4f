// Stopping and starting a cluster's server in place, for tests of clients that must survive a restart.

package pgtest

// StopServer shuts the server down (pg_ctl stop -m fast) and keeps the
// data directory, so StartServer can bring the same cluster back on the
// same port. Stop still cleans up afterwards, whether or not the server is
// running.
func (c *Cluster) StopServer() error {
	return c.run("pg_ctl", "-D", c.DataDir(), "-m", "fast", "-w", "-t", "60", "stop")
}

// StartServer starts a server stopped by StopServer, on the same port and
// settings, and waits until it accepts connections.
func (c *Cluster) StartServer() error {
	return c.run("pg_ctl", "-D", c.DataDir(), "-l", c.LogFile(), "-w", "-t", "60", "start")
}
