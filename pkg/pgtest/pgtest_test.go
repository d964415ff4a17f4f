package pgtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

func show(t *testing.T, url, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
		t.Fatalf("current_setting(%s): %v", name, err)
	}
	return v
}

func TestSharedClusterTCPAndSocket(t *testing.T) {
	c := Shared(t)
	for _, url := range []string{c.URL(), c.SocketURL()} {
		for name, want := range map[string]string{"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off", "listen_addresses": "127.0.0.1"} {
			if got := show(t, url, name); got != want {
				t.Errorf("%s via %s = %q, want %q", name, url, got, want)
			}
		}
	}
	if got := show(t, c.URL(), "unix_socket_directories"); got != c.SocketDir() {
		t.Errorf("socket directory %q, want %q", got, c.SocketDir())
	}
	if !strings.HasPrefix(c.URL(), "postgres://") {
		t.Errorf("URL %q is not a postgres:// URL", c.URL())
	}
}

func TestStartOverridesSettings(t *testing.T) {
	c := Start(t, Options{MaxConnections: 37, WALLevel: "logical", SharedBuffers: "16MB",
		Settings: map[string]string{"work_mem": "7MB", "application_name": "it's quoted"}})
	for name, want := range map[string]string{"max_connections": "37", "wal_level": "logical", "shared_buffers": "16MB", "work_mem": "7MB", "application_name": "it's quoted"} {
		if got := show(t, c.URL(), name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got := show(t, c.URL(), "port"); got != strconv.Itoa(c.Port) {
		t.Errorf("port = %s, want %d", got, c.Port)
	}
}

func TestParallelClustersDoNotCollide(t *testing.T) {
	var wg sync.WaitGroup
	cs := make([]*Cluster, 3)
	for i := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := StartCluster(Options{})
			if err != nil {
				t.Errorf("start cluster %d: %v", i, err)
				return
			}
			cs[i] = c
		}()
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, c := range cs {
		if c == nil {
			continue
		}
		defer c.Stop()
		if seen[c.Port] {
			t.Errorf("port %d used twice", c.Port)
		}
		seen[c.Port] = true
		if got := show(t, c.URL(), "data_directory"); got != c.DataDir() {
			t.Errorf("connected to %s, want the cluster in %s", got, c.DataDir())
		}
	}
}

func TestStopRemovesEverything(t *testing.T) {
	c, err := StartCluster(Options{})
	if err != nil {
		t.Fatal(err)
	}
	pid := postmasterPID(t, c)
	if err := c.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	assertGone(t, c.Base, pid, 10*time.Second)
	if err := c.Stop(); err != nil {
		t.Errorf("second stop: %v", err)
	}
}

func TestDetachedClusterOpenAndStop(t *testing.T) {
	c, err := StartCluster(Options{Detached: true})
	if err != nil {
		t.Fatal(err)
	}
	pid := postmasterPID(t, c)
	o, err := Open(c.Base)
	if err != nil {
		c.Stop()
		t.Fatal(err)
	}
	if o.URL() != c.URL() {
		t.Errorf("reopened URL %s, want %s", o.URL(), c.URL())
	}
	if err := o.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	assertGone(t, c.Base, pid, 10*time.Second)
	if _, err := Open(c.Base); err == nil {
		t.Error("Open of a removed cluster succeeded")
	}
}

// TestNothingLeftBehind runs a child test binary that starts a cluster and
// then dies in several ways; the cluster must vanish every time.
func TestNothingLeftBehind(t *testing.T) {
	for _, mode := range []string{"return", "fail", "panic", "sigint", "sigkill"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperChildCluster$", "-test.count=1")
			cmd.Env = append(os.Environ(), "PGTEST_CHILD_MODE="+mode)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = cmd.Stdout
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var base string
			var pid int
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if _, err := fmt.Sscanf(sc.Text(), "CLUSTER %s %d", &base, &pid); err == nil {
					break
				}
			}
			if base == "" {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("child printed no cluster line")
			}
			switch mode {
			case "sigint":
				syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) // like Ctrl-C: the whole group
			case "sigkill":
				cmd.Process.Kill()
			}
			go func() {
				for sc.Scan() {
				}
			}()
			err = cmd.Wait()
			if mode == "return" && err != nil {
				t.Errorf("child exited with %v", err)
			}
			if mode != "return" && err == nil {
				t.Errorf("child in mode %s exited 0", mode)
			}
			assertGone(t, base, pid, 60*time.Second)
		})
	}
}

// TestHelperChildCluster is the child of TestNothingLeftBehind.
func TestHelperChildCluster(t *testing.T) {
	mode := os.Getenv("PGTEST_CHILD_MODE")
	if mode == "" {
		t.Skip("only runs as TestNothingLeftBehind's child")
	}
	c := Shared(t)
	fmt.Printf("CLUSTER %s %d\n", c.Base, postmasterPID(t, c))
	switch mode {
	case "fail":
		t.Fatal("failing on purpose")
	case "panic":
		panic("panicking on purpose")
	case "sigint", "sigkill":
		time.Sleep(2 * time.Minute) // the parent kills us
	}
}

func postmasterPID(t *testing.T, c *Cluster) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(c.DataDir(), "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(raw), "\n", 2)[0])
	if err != nil {
		t.Fatalf("postmaster.pid: %v", err)
	}
	return pid
}

// assertGone waits up to wait for the directory and the postmaster to vanish.
func assertGone(t *testing.T, base string, pid int, wait time.Duration) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		_, statErr := os.Stat(base)
		dirGone := errors.Is(statErr, os.ErrNotExist)
		procGone := errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) || isZombie(pid)
		if dirGone && procGone {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("left behind: directory %s gone=%v, postmaster %d gone=%v", base, dirGone, pid, procGone)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// isZombie reports a process that has exited but was not yet reaped; some
// init processes reap orphans lazily.
func isZombie(pid int) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
