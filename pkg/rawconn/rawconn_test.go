package rawconn

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// pair is a connected TCP pair: a wrapped server end and a plain client.
func pair(t *testing.T) (wrapped, peer net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	peer, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	wrapped = Wrap(<-got)
	t.Cleanup(func() { wrapped.Close(); peer.Close() })
	return wrapped, peer
}

func TestWrapsSocketsOnly(t *testing.T) {
	w, _ := pair(t)
	if _, ok := w.(*Conn); !ok && runtime.GOOS == "linux" {
		t.Fatalf("a TCP connection was not wrapped: %T", w)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if Wrap(a) != a {
		t.Error("net.Pipe was wrapped")
	}
}

// Both directions carry the bytes intact, including writes far larger than
// the socket buffer (the writer then waits for the poller) and reads that
// wait for data.
func TestReadWrite(t *testing.T) {
	w, peer := pair(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	errc := make(chan error, 1)
	go func() {
		_, err := w.Write(big)
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the writer fill the buffers and wait
	got := make([]byte, len(big))
	if _, err := io.ReadFull(peer, got); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("write: %v", err)
	}
	if !bytes.Equal(got, big) {
		t.Fatal("the peer read other bytes than were written")
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		peer.Write([]byte("hello"))
	}()
	buf := make([]byte, 16)
	n, err := w.Read(buf) // waits for the data
	if err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if n, err := w.Read(nil); n != 0 || err != nil {
		t.Errorf("empty read: %d, %v", n, err)
	}
}

// The errors are the ones the net package gives, so callers' checks hold.
func TestErrors(t *testing.T) {
	w, peer := pair(t)

	w.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	_, err := w.Read(make([]byte, 8))
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("read past the deadline: %v", err)
	}
	w.SetReadDeadline(time.Time{})

	// A deadline in the past wakes a read already waiting (how the proxy
	// stops a server goroutine).
	done := make(chan error, 1)
	go func() {
		_, err := w.Read(make([]byte, 8))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	w.SetReadDeadline(time.Unix(1, 0))
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("woken read: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a past deadline did not wake the read")
	}
	w.SetReadDeadline(time.Time{})

	peer.Close()
	if _, err := w.Read(make([]byte, 8)); err != io.EOF {
		t.Errorf("read after the peer closed: %v, want io.EOF", err)
	}
	var werr error
	for i := 0; i < 100 && werr == nil; i++ { // the first writes may still be accepted
		_, werr = w.Write([]byte("x"))
		time.Sleep(time.Millisecond)
	}
	if !errors.Is(werr, syscall.EPIPE) && !errors.Is(werr, syscall.ECONNRESET) {
		t.Errorf("write to a closed peer: %v, want EPIPE or ECONNRESET", werr)
	}

	w.Close()
	if _, err := w.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("read after Close: %v, want net.ErrClosed", err)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("write after Close: %v, want net.ErrClosed", err)
	}
}

func TestUnixSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(c, c) // echo
	}()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	w := Wrap(c)
	defer w.Close()
	if _, err := w.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := io.ReadFull(w, got); err != nil || string(got) != "ping" {
		t.Fatalf("echo %q, %v", got, err)
	}
}

// A read or write that does not wait allocates nothing: a proxy makes
// several per transaction.
func TestNoAllocations(t *testing.T) {
	c, peer := pair(t)
	msg := []byte("0123456789")
	buf := make([]byte, 64)
	back := make([]byte, len(msg))
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(peer, back); err != nil {
			t.Fatal(err)
		}
		if _, err := peer.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf[:len(msg)]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per write, read and the peer's echo, want 0", allocs)
	}
}
