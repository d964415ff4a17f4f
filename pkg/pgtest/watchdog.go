// The watchdog process that removes a cluster when its owner dies.

package pgtest

import (
	"fmt"
	"path/filepath"
)

// watchdogScript blocks until its stdin reaches EOF, which happens when the
// owning process closes the pipe (Stop) or dies in any way, then stops the
// server and deletes the cluster directory. It ignores terminal signals so a
// Ctrl-C cannot interrupt the cleanup.
const watchdogScript = `trap '' INT HUP TERM QUIT PIPE
cat >/dev/null 2>&1
if [ -f "$2/postmaster.pid" ]; then "$1" -D "$2" -m immediate -w -t 60 stop >/dev/null 2>&1; fi
rm -rf "$3"
`

func (c *Cluster) startWatchdog() error {
	cmd := c.acct.command("/", "/bin/sh", "-c", watchdogScript, "pgtest-watchdog",
		filepath.Join(c.BinDir, "pg_ctl"), c.DataDir(), c.Base)
	pipe, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("cluster watchdog: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start cluster watchdog: %w", err)
	}
	c.watchdog, c.wdPipe = cmd, pipe
	return nil
}
