// Package wire holds what the two relay prototypes share: the server
// startup (trust authentication), the client's welcome built from the first
// server's answer, and a framing tracker that tells when a server's answer
// ends with ReadyForQuery in the idle state. Nothing else is parsed: these
// are measurement prototypes, not proxies (no TLS, no authentication of
// clients, no state tracking, no error handling worth the name).
package wire

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/url"
)

// Flags are the qprouter flags the prototypes take, so that
// scripts/bench-router can start them with --qprouter; the rest are
// accepted and ignored.
type Flags struct {
	Listen          string `default:"127.0.0.1:6432"`
	ServerURL       string `name:"server-url" required:""`
	PoolSize        int    `name:"pool-size" default:"16"`
	PoolMode        string `name:"pool-mode" help:"Ignored: always transaction pooling."`
	AuthFile        string `name:"auth-file" help:"Ignored: clients are trusted."`
	Admin           string `help:"Ignored."`
	LogLevel        string `name:"log-level" help:"Ignored."`
	ShutdownTimeout string `name:"shutdown-timeout" help:"Ignored."`
	EventLoop       bool   `name:"event-loop" negatable:"" help:"Ignored: always an event loop (accepted because scripts/bench-router passes it)."`
}

// Target is the server's address, database and user from --server-url.
func (f *Flags) Target() (addr, db, user string, err error) {
	u, err := url.Parse(f.ServerURL)
	if err != nil {
		return "", "", "", fmt.Errorf("--server-url: %w", err)
	}
	db, user = "postgres", "postgres"
	if p := u.Path; len(p) > 1 {
		db = p[1:]
	}
	if u.User != nil && u.User.Username() != "" {
		user = u.User.Username()
	}
	return u.Host, db, user, nil
}

// SSLRequestCode is the protocol version number of an SSLRequest.
const SSLRequestCode = 80877103

// Dial opens a server connection and runs its startup until ReadyForQuery.
// It returns the connection and the answer's bytes.
func Dial(addr, db, user string) (net.Conn, []byte, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	sp := binary.BigEndian.AppendUint32(nil, 0)
	sp = binary.BigEndian.AppendUint32(sp, 196608)
	for _, s := range []string{"user", user, "database", db} {
		sp = append(append(sp, s...), 0)
	}
	sp = append(sp, 0)
	binary.BigEndian.PutUint32(sp, uint32(len(sp)))
	if _, err := c.Write(sp); err != nil {
		c.Close()
		return nil, nil, err
	}
	var got []byte
	b := make([]byte, 8192)
	for len(got) < 6 || got[len(got)-6] != 'Z' {
		n, err := c.Read(b)
		if err != nil {
			c.Close()
			return nil, nil, fmt.Errorf("server startup: %w", err)
		}
		got = append(got, b[:n]...)
		if got[0] == 'E' {
			c.Close()
			return nil, nil, fmt.Errorf("server startup refused (the prototypes need trust): %q", got)
		}
	}
	return c, got, nil
}

// Welcome is what a client gets after its startup packet: AuthenticationOk,
// then the server's ParameterStatus, BackendKeyData and ReadyForQuery.
func Welcome(serverStartup []byte) []byte {
	w := []byte{'R', 0, 0, 0, 8, 0, 0, 0, 0}
	for i := 0; i+5 <= len(serverStartup); {
		l := int(binary.BigEndian.Uint32(serverStartup[i+1:]))
		if t := serverStartup[i]; t == 'S' || t == 'K' || t == 'Z' {
			w = append(w, serverStartup[i:i+1+l]...)
		}
		i += 1 + l
	}
	return w
}

// Frames follows a server's message stream across reads.
type Frames struct {
	hdr  [5]byte
	hn   int
	left int
	last byte
	idle bool
}

// Reset starts a new answer.
func (f *Frames) Reset() { *f = Frames{} }

// Feed consumes b and reports whether it ends right after a ReadyForQuery
// whose status is idle ('I'): the end of a transaction.
func (f *Frames) Feed(b []byte) bool {
	end := false
	for i := 0; i < len(b); {
		if f.left > 0 {
			k := min(f.left, len(b)-i)
			if f.last == 'Z' {
				f.idle = b[i] == 'I'
			}
			f.left -= k
			i += k
			end = f.left == 0 && f.last == 'Z' && f.idle
			continue
		}
		f.hdr[f.hn] = b[i]
		f.hn++
		i++
		end = false
		if f.hn == 5 {
			f.last, f.left, f.hn = f.hdr[0], int(binary.BigEndian.Uint32(f.hdr[1:]))-4, 0
		}
	}
	return end
}

// Startup reads a client's startup packet (answering an SSLRequest with
// 'N' first) and writes the welcome.
func Startup(c io.ReadWriter, welcome []byte) error {
	b := make([]byte, 1024)
	for {
		n, err := c.Read(b)
		if err != nil {
			return err
		}
		if n >= 8 && binary.BigEndian.Uint32(b[4:]) == SSLRequestCode {
			if _, err := c.Write([]byte{'N'}); err != nil {
				return err
			}
			continue
		}
		_, err = c.Write(welcome)
		return err
	}
}
