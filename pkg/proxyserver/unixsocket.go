// Listening on a Unix socket beside TCP, where PostgreSQL clients look for one.

package proxyserver

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"time"

	"github.com/qpkit/qpkit/pkg/rawconn"
)

// unixSocketPath is where libpq looks for a server on port in dir.
func unixSocketPath(dir string, port int) string {
	return filepath.Join(dir, fmt.Sprintf(".s.PGSQL.%d", port))
}

// parseSocketMode reads an octal permission such as "0777" or "770".
func parseSocketMode(s string) (os.FileMode, error) {
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil || n > 0o777 {
		return 0, fmt.Errorf("--unix-socket-mode %q: want octal permissions such as 0777", s)
	}
	return os.FileMode(n), nil
}

// lookupGroup reads a group name or number; "" is -1, no change.
func lookupGroup(name string) (int, error) {
	if name == "" {
		return -1, nil
	}
	if gid, err := strconv.Atoi(name); err == nil && gid >= 0 {
		return gid, nil
	}
	g, err := user.LookupGroup(name)
	if err != nil {
		return 0, fmt.Errorf("--unix-socket-group %q: %w", name, err)
	}
	return strconv.Atoi(g.Gid)
}

// listenUnix listens on the socket for port in dir, as PostgreSQL names
// it, with mode and group gid (-1: the process's). A socket file left by a
// process that is gone is replaced; one a live server answers on is an
// error.
func listenUnix(dir string, port int, mode os.FileMode, gid int) (net.Listener, error) {
	path := unixSocketPath(dir, port)
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("unix socket %s: the path exists and is not a socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("unix socket %s: another server is listening there", path)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("unix socket %s: removing the stale socket: %w", path, err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("unix socket: %w", err)
	}
	if err := os.Chmod(path, mode); err != nil {
		ln.Close()
		return nil, fmt.Errorf("unix socket %s: %w", path, err)
	}
	if gid >= 0 {
		if err := os.Chown(path, -1, gid); err != nil {
			ln.Close()
			return nil, fmt.Errorf("unix socket %s: group %d: %w", path, gid, err)
		}
	}
	return peerListener{ln}, nil
}

// peerAddr is a Unix-socket client's address with the user id of its
// process, for the peer method of host-based rules.
type peerAddr struct {
	net.Addr
	uid   int
	known bool // uid came from the system
}

// peerConn is a Unix-socket client whose RemoteAddr is a peerAddr; the
// socket underneath stays reachable (SyscallConn), for raw I/O and an
// event loop.
type peerConn struct {
	*net.UnixConn
	addr *peerAddr
}

func (c *peerConn) RemoteAddr() net.Addr { return c.addr }

// peerListener reads each client's credentials as it is accepted.
type peerListener struct{ net.Listener }

// Accept waits out running short of descriptors or memory, as the TCP
// listener does (rawconn.Exhausted): the server goes on once clients
// leave, rather than stopping.
func (l peerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	for err != nil && rawconn.Exhausted(err) {
		time.Sleep(rawconn.ExhaustedRetry)
		c, err = l.Listener.Accept()
	}
	if err != nil {
		return nil, err
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return c, nil
	}
	uid, known := peerUID(uc)
	return &peerConn{UnixConn: uc, addr: &peerAddr{Addr: uc.RemoteAddr(), uid: uid, known: known}}, nil
}
