//go:build linux

package netloop

import (
	"io"
	"runtime"
	"testing"
	"time"
)

// echo writes back what it reads, on the loop thread.
type echo struct{}

func (echo) Ready(c *Conn) {
	buf := make([]byte, 64)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		c.Write(buf[:n])
	}
}

// A busy loop keeps its processor while it waits, so each loop adds one
// to GOMAXPROCS while it runs: with a single processor to begin with,
// goroutines, the collector's stops of the world and timers still run
// beside a loop kept busy by a ping-pong, and Close gives the processor
// back.
func TestBusyLoopLeavesProcessors(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if got := runtime.GOMAXPROCS(0); got != 2 {
		l.Close()
		t.Fatalf("GOMAXPROCS with one loop: %d, want 2", got)
	}
	c, peer := pair(t, l)
	set := make(chan bool)
	l.Post(func() { c.SetHandler(echo{}); set <- true })
	<-set

	stop := make(chan struct{})
	pings := make(chan int, 1)
	go func() { // keeps the loop hot: never hotWait without an event
		n := 0
		defer func() { pings <- n }()
		b := make([]byte, 1)
		for {
			select {
			case <-stop:
				return
			default:
			}
			peer.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := peer.Write(b); err != nil {
				return
			}
			if _, err := io.ReadFull(peer, b); err != nil {
				return
			}
			n++
		}
	}()

	done := make(chan bool)
	go func() {
		for range 5 {
			runtime.GC()
		}
		time.Sleep(20 * time.Millisecond)
		x := 0
		for i := range 10_000_000 {
			x += i
		}
		done <- x > 0
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("goroutines beside the busy loop did not finish in 20 s")
	}
	close(stop)
	if n := <-pings; n == 0 {
		t.Fatal("the loop echoed nothing")
	}
	l.Close()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS after Close: %d, want 1", got)
	}
}

// A busy loop makes one epoll_wait per round: an event that comes within
// hotWait is waited for by the same call that would have found it there,
// so a ping-pong costs about one wait per ping, not two.
func TestHotLoopWaitsOncePerRound(t *testing.T) {
	l := newLoop(t)
	c, peer := pair(t, l)
	onLoop(l, func() { c.SetHandler(echo{}) })
	b := make([]byte, 1)
	ping := func() {
		if _, err := peer.Write(b); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(peer, b); err != nil {
			t.Fatal(err)
		}
	}
	peer.SetDeadline(time.Now().Add(10 * time.Second))
	for range 20 { // warm: the loop is hot
		ping()
	}
	var before, after uint64
	onLoop(l, func() { before = l.waits })
	const pings = 400
	for range pings {
		ping()
	}
	onLoop(l, func() { after = l.waits })
	// The two onLoop posts add a round each; a ping that took longer
	// than hotWait adds one more wait.
	if got := after - before; got > pings*3/2 {
		t.Errorf("%d epoll_wait calls for %d pings, want about one each", got, pings)
	}
	t.Logf("%d epoll_wait calls for %d pings", after-before, pings)
}
