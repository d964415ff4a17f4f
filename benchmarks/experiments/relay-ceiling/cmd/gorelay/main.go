// Command gorelay is a measurement prototype: transaction pooling with a
// goroutine per client on the standard net package, servers handed around
// through a channel. Next to evloop and qprouter it separates what the
// goroutine-per-connection model costs from what qprouter's own work
// (tracking, digests, metrics) costs (docs/benchmarks.md, "What an event
// loop reaches"). It is not a proxy: clients are trusted, nothing is
// tracked.
package main

import (
	"fmt"
	"net"
	"os"

	"github.com/alecthomas/kong"
	"github.com/qpkit/qpkit/benchmarks/experiments/relay-ceiling/wire"
)

type server struct {
	c      net.Conn
	buf    []byte
	frames wire.Frames
}

// relay copies the server's answer to the client until the transaction
// ends.
func (s *server) relay(client net.Conn) error {
	s.frames.Reset()
	for {
		n, err := s.c.Read(s.buf)
		if err != nil {
			return err
		}
		end := s.frames.Feed(s.buf[:n])
		if _, err := client.Write(s.buf[:n]); err != nil {
			return err
		}
		if end {
			return nil
		}
	}
}

func serve(c net.Conn, pool chan *server, welcome []byte) {
	defer c.Close()
	if wire.Startup(c, welcome) != nil {
		return
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		if err != nil || buf[0] == 'X' {
			return
		}
		s := <-pool
		_, err = s.c.Write(buf[:n])
		if err == nil {
			err = s.relay(c)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gorelay:", err)
			return // the server is lost with the client
		}
		pool <- s
	}
}

func run(f *wire.Flags) error {
	addr, db, user, err := f.Target()
	if err != nil {
		return err
	}
	pool := make(chan *server, f.PoolSize)
	var welcome []byte
	for i := 0; i < f.PoolSize; i++ {
		c, answer, err := wire.Dial(addr, db, user)
		if err != nil {
			return err
		}
		if welcome == nil {
			welcome = wire.Welcome(answer)
		}
		pool <- &server{c: c, buf: make([]byte, 32<<10)}
	}
	ln, err := net.Listen("tcp", f.Listen)
	if err != nil {
		return err
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go serve(c, pool, welcome)
	}
}

func main() {
	var f wire.Flags
	kong.Parse(&f, kong.Description("Measurement prototype: transaction pooling with a goroutine per client (trust, no tracking)."))
	if err := run(&f); err != nil {
		fmt.Fprintln(os.Stderr, "gorelay:", err)
		os.Exit(1)
	}
}
