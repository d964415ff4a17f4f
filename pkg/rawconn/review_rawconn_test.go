package rawconn

// Review tests: each asserts net.Conn's contract where rawconn's
// connections differ from the net package's.

import (
	"errors"
	"net"
	"testing"
	"time"
)

// A connection accepted by Listener (an *os.File underneath) reports a
// second Close and a deadline set after Close as net does: errors wrapping
// net.ErrClosed. A *net.TCPConn does exactly that (checked first, in the
// same test); Listener's connections return os.File's "file already
// closed" and poll's "use of closed file" instead.
func TestRawReviewAcceptedConnClosedErrors(t *testing.T) {
	// What net does, for comparison.
	plain, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	nc, _ := accepted(t, plain)
	nc.Close()
	if err := nc.Close(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("net itself: second Close: %v", err)
	}
	if err := nc.SetDeadline(time.Now()); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("net itself: SetDeadline after Close: %v", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Listen(ln, true)
	defer l.Close()
	c, _ := accepted(t, l)
	if err := c.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := c.Close(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("second Close of an accepted connection: %v (%T), want an error wrapping net.ErrClosed", err, err)
	}
	if err := c.SetDeadline(time.Now()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("SetDeadline after Close: %v (%T), want an error wrapping net.ErrClosed", err, err)
	}
	if err := c.SetReadDeadline(time.Unix(1, 0)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("SetReadDeadline after Close: %v (%T), want an error wrapping net.ErrClosed", err, err)
	}
}

// A zero-length Read on a closed connection fails with net.ErrClosed in
// net (poll.FD.Read takes the read lock before its len(p)==0 shortcut);
// Conn.Read answers (0, nil), as if the connection were open.
func TestRawReviewZeroReadAfterClose(t *testing.T) {
	w, _ := pair(t) // a wrapped *net.TCPConn
	w.Close()
	if n, err := w.Read(nil); !errors.Is(err, net.ErrClosed) {
		t.Errorf("wrapped conn: Read(nil) after Close = %d, %v; want net.ErrClosed", n, err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Listen(ln, true)
	defer l.Close()
	c, _ := accepted(t, l)
	c.Close()
	if n, err := c.Read([]byte{}); !errors.Is(err, net.ErrClosed) {
		t.Errorf("accepted conn: Read([]byte{}) after Close = %d, %v; want net.ErrClosed", n, err)
	}
}
