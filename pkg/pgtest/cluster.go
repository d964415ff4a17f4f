// Starting and stopping one throwaway cluster.

package pgtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Cluster is a running throwaway PostgreSQL server.
type Cluster struct {
	// Base is the directory holding everything: data/, sock/, postgres.log.
	Base string `json:"base"`
	// Port is the TCP port on 127.0.0.1.
	Port int `json:"port"`
	// BinDir holds the server programs that run it.
	BinDir string `json:"bindir"`
	// Detached clusters outlive the process that started them.
	Detached bool `json:"detached"`

	acct     account
	watchdog *exec.Cmd
	wdPipe   io.WriteCloser
	stopOnce sync.Once
	stopErr  error
}

// stateFile names the file in Base that lets another process (pg-sandbox
// stop) find and stop a detached cluster.
const stateFile = "pgtest.json"

// DataDir is the cluster's PGDATA.
func (c *Cluster) DataDir() string { return filepath.Join(c.Base, "data") }

// SocketDir is the directory of the cluster's unix socket.
func (c *Cluster) SocketDir() string { return filepath.Join(c.Base, "sock") }

// LogFile is where the server writes its log.
func (c *Cluster) LogFile() string { return filepath.Join(c.Base, "postgres.log") }

// URL is a TCP connection URL for the superuser "postgres" and database
// "postgres".
func (c *Cluster) URL() string { return c.DBURL("postgres") }

// DBURL is URL for another database of the cluster.
func (c *Cluster) DBURL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.Port, db)
}

// SocketURL connects over the unix socket instead of TCP.
func (c *Cluster) SocketURL() string {
	return fmt.Sprintf("postgres://postgres@/postgres?host=%s&port=%d&sslmode=disable", c.SocketDir(), c.Port)
}

// StartCluster initialises and starts a new cluster. Unless opts.Detached,
// the cluster is stopped and deleted when this process ends, however it
// ends; call Stop to do it sooner.
func StartCluster(opts Options) (*Cluster, error) {
	if err := opts.checkSettings(); err != nil {
		return nil, err
	}
	binDir, err := FindBinDir()
	if err != nil {
		return nil, err
	}
	acct, err := serverAccount()
	if err != nil {
		return nil, err
	}
	// Root's TMPDIR may be unreadable by the server account; /tmp never is.
	root := os.TempDir()
	if acct.cred != nil {
		root = "/tmp"
	}
	if d := os.Getenv("PGTEST_DIR"); d != "" {
		root = d // e.g. /dev/shm for benchmarks that must not wait on a disk
	}
	base, err := os.MkdirTemp(root, "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("create cluster directory: %w", err)
	}
	c := &Cluster{Base: base, BinDir: binDir, Detached: opts.Detached, acct: acct}
	if err := acct.give(base); err != nil {
		os.RemoveAll(base)
		return nil, err
	}
	if !opts.Detached {
		// The watchdog exists before initdb so that even a crash during
		// start-up leaves nothing behind.
		if err := c.startWatchdog(); err != nil {
			os.RemoveAll(base)
			return nil, err
		}
	}
	if err := c.initAndStart(opts); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) initAndStart(opts Options) error {
	if err := c.run("initdb", "-D", c.DataDir(), "-U", "postgres", "--auth=trust", "-N", "-E", "UTF8", "--locale=C"); err != nil {
		return err
	}
	if err := os.Mkdir(c.SocketDir(), 0o700); err != nil {
		return fmt.Errorf("create socket directory: %w", err)
	}
	if err := c.acct.give(c.SocketDir()); err != nil {
		return err
	}
	conf := filepath.Join(c.DataDir(), "postgresql.conf")
	if err := appendFile(conf, "\ninclude 'pgtest.conf'\n"); err != nil {
		return err
	}
	// A port that was free a moment ago may be taken by a parallel test
	// binary before postgres binds it, so retry with another.
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		c.Port = port
		file := filepath.Join(c.DataDir(), "pgtest.conf")
		if err := os.WriteFile(file, []byte(confText(opts.settings(port, c.SocketDir()))), 0o600); err != nil {
			return fmt.Errorf("write %s: %w", file, err)
		}
		if err := c.acct.give(file); err != nil {
			return err
		}
		lastErr = c.run("pg_ctl", "-D", c.DataDir(), "-l", c.LogFile(), "-w", "-t", "60", "start")
		if lastErr == nil {
			return c.writeState()
		}
		if !strings.Contains(c.logTail(), "could not bind") && !strings.Contains(c.logTail(), "could not create any TCP/IP sockets") {
			break
		}
	}
	return fmt.Errorf("%w\nserver log:\n%s", lastErr, c.logTail())
}

// Stop shuts the server down and deletes its directory. It is safe to call
// more than once.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		if c.wdPipe != nil {
			c.wdPipe.Close() // the watchdog stops and deletes
			done := make(chan error, 1)
			go func() { done <- c.watchdog.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					c.stopErr = fmt.Errorf("cluster watchdog: %w", err)
				}
			case <-time.After(90 * time.Second):
				c.stopErr = errors.New("cluster watchdog did not finish within 90s")
			}
			return
		}
		if _, err := os.Stat(filepath.Join(c.DataDir(), "postmaster.pid")); err == nil {
			if err := c.run("pg_ctl", "-D", c.DataDir(), "-m", "fast", "-w", "-t", "60", "stop"); err != nil && c.Alive() {
				c.stopErr = err // a server that died left its postmaster.pid: nothing to stop
			}
		}
		if err := os.RemoveAll(c.Base); err != nil && c.stopErr == nil {
			c.stopErr = fmt.Errorf("remove %s: %w", c.Base, err)
		}
	})
	return c.stopErr
}

// Alive tells whether the cluster's server is running (pg_ctl status).
func (c *Cluster) Alive() bool {
	return c.run("pg_ctl", "-D", c.DataDir(), "status") == nil
}

// Open finds a detached cluster by its directory, as pg-sandbox does.
func Open(base string) (*Cluster, error) {
	raw, err := os.ReadFile(filepath.Join(base, stateFile))
	if err != nil {
		return nil, fmt.Errorf("no cluster in %s: %w", base, err)
	}
	c := &Cluster{}
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(base, stateFile), err)
	}
	if c.acct, err = serverAccount(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Cluster) writeState() error {
	raw, _ := json.Marshal(c)
	return os.WriteFile(filepath.Join(c.Base, stateFile), raw, 0o644)
}

// run executes a server program as the server account, with its output
// folded into the error when it fails.
func (c *Cluster) run(prog string, args ...string) error {
	cmd := c.acct.command(c.Base, filepath.Join(c.BinDir, prog), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s (as %s): %w\n%s", prog, strings.Join(args, " "), c.acct.name, err, strings.TrimSpace(out.String()))
	}
	return nil
}

func (c *Cluster) logTail() string {
	raw, _ := os.ReadFile(c.LogFile())
	if len(raw) > 2000 {
		raw = raw[len(raw)-2000:]
	}
	return string(raw)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return fmt.Errorf("append to %s: %w", path, err)
	}
	return f.Close()
}
