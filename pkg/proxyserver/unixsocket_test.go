package proxyserver

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// listenUnix replaces a stale socket file, refuses a live one and a file
// that is not a socket, and sets the mode.
func TestListenUnix(t *testing.T) {
	dir := t.TempDir()
	ln, err := listenUnix(dir, 6543, 0o770, -1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ".s.PGSQL.6543")
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o770 {
		t.Fatalf("socket: %v %v", fi, err)
	}
	if _, err := listenUnix(dir, 6543, 0o777, -1); err == nil || !strings.Contains(err.Error(), "another server is listening there") {
		t.Errorf("a live socket: %v", err)
	}
	// A client's address carries its process's user id.
	cl, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if pa, ok := sc.RemoteAddr().(*peerAddr); !ok || !pa.known || pa.uid != os.Getuid() {
		t.Errorf("accepted client's address %#v, want uid %d", sc.RemoteAddr(), os.Getuid())
	}
	sc.Close()
	// A socket file nobody listens on any more (a killed process's).
	ln.(peerListener).Listener.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the stale socket is gone: %v", err)
	}
	ln, err = listenUnix(dir, 6543, 0o777, -1)
	if err != nil {
		t.Fatalf("over a stale socket: %v", err)
	}
	ln.Close()

	if err := os.WriteFile(filepath.Join(dir, ".s.PGSQL.7"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := listenUnix(dir, 7, 0o777, -1); err == nil || !strings.Contains(err.Error(), "is not a socket") {
		t.Errorf("a regular file: %v", err)
	}
	if _, err := parseSocketMode("0999"); err == nil {
		t.Error("mode 0999 accepted")
	}
	if m, err := parseSocketMode("770"); err != nil || m != 0o770 {
		t.Errorf("mode 770: %o %v", m, err)
	}
}

// TestListenUnixGroup: --unix-socket-group gives the socket file a group,
// by name or number; an unknown name is refused. Root gives it a group of
// its own choosing; another user can only name its own group, which the
// file has anyway.
func TestListenUnixGroup(t *testing.T) {
	name, gid := "", os.Getgid()
	if g, err := user.LookupGroupId(strconv.Itoa(gid)); err == nil {
		name = g.Name
	}
	if os.Geteuid() == 0 {
		if g, err := user.LookupGroup("nogroup"); err == nil {
			name, gid = g.Name, atoi(t, g.Gid)
		}
	}
	for _, spec := range []string{name, strconv.Itoa(gid)} {
		if spec == "" {
			continue
		}
		got, err := lookupGroup(spec)
		if err != nil || got != gid {
			t.Fatalf("lookupGroup(%q) = %d, %v; want %d", spec, got, err, gid)
		}
		dir := t.TempDir()
		ln, err := listenUnix(dir, 6543, 0o770, got)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(dir, ".s.PGSQL.6543"))
		ln.Close()
		if err != nil || int(fi.Sys().(*syscall.Stat_t).Gid) != gid {
			t.Errorf("group %q: socket %v %v, want gid %d", spec, fi.Sys(), err, gid)
		}
	}
	if _, err := lookupGroup("no-such-group-qpkit"); err == nil {
		t.Error("an unknown group accepted")
	}
	if g, err := lookupGroup(""); err != nil || g != -1 {
		t.Errorf(`lookupGroup(""): %d %v`, g, err)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Out of file descriptors, the Unix socket's listener waits and accepts
// again, as the TCP one does: the server goes on serving once clients
// leave, where before Serve returned at once, without draining.
func TestUnixSocketOutOfDescriptors(t *testing.T) {
	cl := pgtest.Start(t, pgtest.Options{})
	c := valid()
	c.ServerURL = fmt.Sprintf("postgres://127.0.0.1:%d/postgres?sslmode=disable", cl.Port)
	c.UnixSocketDir, c.UnixSocketMode = t.TempDir(), "0777"
	c.AcquireTimeout = 10 * time.Second // a loaded machine connects slowly to the server
	ready := make(chan string, 1)
	s, err := New(Options{Config: c, Ready: func(a string) { ready <- a }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	addr := <-ready
	_, port, _ := net.SplitHostPort(addr)
	path := filepath.Join(c.UnixSocketDir, ".s.PGSQL."+port)

	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	open, _ := os.ReadDir("/proc/self/fd")
	low := lim
	low.Cur = uint64(len(open) + 30)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	var conns []net.Conn
	for range 60 {
		cn, err := net.Dial("unix", path)
		if err != nil {
			break
		}
		conns = append(conns, cn)
	}
	time.Sleep(300 * time.Millisecond)
	for _, cn := range conns {
		cn.Close()
	}
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	select {
	case err := <-done:
		t.Fatalf("running out of descriptors on the Unix socket stopped the server: Serve returned %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	// and it serves again
	db, err := pgx.Connect(context.Background(), fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres sslmode=disable", c.UnixSocketDir, port))
	if err != nil {
		t.Fatalf("after the descriptors came back: %v", err)
	}
	db.Close(context.Background())
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}
