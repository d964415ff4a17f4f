// Accepting on the event loop: a client's startup, authentication and welcome on the loop's thread.

package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/qpkit/qpkit/pkg/netloop"
	"github.com/qpkit/qpkit/pkg/pgwire"
	"github.com/qpkit/qpkit/pkg/rawconn"
	"github.com/qpkit/qpkit/pkg/route"
)

// detachable is a listener whose socket an event loop can poll
// (*rawconn.Listener on Linux).
type detachable interface {
	net.Listener
	Detach() (int, error)
	AcceptFD(lfd int) (fd int, laddr, raddr net.Addr, err error)
}

// loopListener is a listening socket polled by an event loop. A client
// that connects for one transaction (pgbench -C) is then accepted,
// authenticated, welcomed, served and, when it leaves, closed there, the
// way PgBouncer's loop does it, with no goroutine waking: through Go's
// poller each of those steps wakes the client's goroutine, and the
// scheduler's threads sleep and wake around it.
type loopListener struct {
	p    *Proxy
	ln   detachable
	lc   *netloop.Conn // the listening socket
	once sync.Once
	done chan struct{}
}

// serveOnLoop serves ln's clients from loop until ln is closed.
func (p *Proxy) serveOnLoop(ln detachable, loop *netloop.Loop) error {
	fd, err := ln.Detach()
	if err != nil {
		return err
	}
	lc, err := loop.AdoptFD(fd, ln.Addr(), nil)
	if err != nil {
		return err
	}
	l := &loopListener{p: p, ln: ln, lc: lc, done: make(chan struct{})}
	p.mu.Lock()
	if p.draining.Load() {
		p.mu.Unlock()
		lc.Close()
		return net.ErrClosed
	}
	p.ln = append(p.ln, l)
	p.mu.Unlock()
	loop.Post(func() {
		lc.SetHandler(l)
		l.Ready(lc)
	})
	<-l.done
	return nil
}

func (l *loopListener) Addr() net.Addr { return l.ln.Addr() }
func (l *loopListener) Accept() (net.Conn, error) {
	return nil, errors.New("proxy: accepted on the event loop")
}

// Close stops accepting.
func (l *loopListener) Close() error {
	l.once.Do(func() {
		l.lc.Close()
		close(l.done)
	})
	return nil
}

// Panicked logs a panic of Ready; the loop recovered it and the
// listener goes on.
func (l *loopListener) Panicked(_ *netloop.Conn, v any) {
	l.p.log.Warn("proxy: accept panicked on the event loop", "panic", v)
}

// Ready accepts every queued connection, on the loop thread.
func (l *loopListener) Ready(c *netloop.Conn) {
	for !c.Closed() {
		var fd int
		var laddr, raddr net.Addr
		var err error
		if c.Control(func(lfd int) { fd, laddr, raddr, err = l.ln.AcceptFD(lfd) }) != nil {
			return
		}
		switch {
		case err == nil:
		case errors.Is(err, syscall.EAGAIN):
			return
		case rawconn.Exhausted(err):
			// The queue stays, and no new edge will report it.
			loop := c.Loop()
			time.AfterFunc(rawconn.ExhaustedRetry, func() { loop.Post(func() { l.Ready(c) }) })
			return
		default:
			l.p.log.Warn("proxy: accept", "err", err)
			return
		}
		nc, err := c.Loop().AdoptFD(fd, laddr, raddr)
		if err != nil {
			l.p.log.Warn("proxy: accept", "err", err)
			continue
		}
		l.p.wg.Add(1)
		startHandshake(l.p, nc)
	}
}

// loopHandshake runs a client's startup and authentication on the loop
// (pgwire.Handshake); what it cannot do goes to a goroutine's Accept.
type loopHandshake struct {
	p     *Proxy
	c     *netloop.Conn
	h     *pgwire.Handshake
	timer *time.Timer
	stop  func() bool // unregisters the shutdown's expire
	began time.Time   // the login timeout counts from here, also on a goroutine
	over  bool
	buf   [512]byte // what Ready reads into (a local would escape)
}

func startHandshake(p *Proxy, c *netloop.Conn) {
	hs := &loopHandshake{p: p, c: c, h: pgwire.NewHandshake(p.opts.Auth).From(c.RemoteAddr()), began: time.Now()}
	loop := c.Loop()
	hs.timer = time.AfterFunc(p.startupTimeout(), func() { loop.Post(hs.expire) })
	// Shutdown ends logins under way at once, as it closes idle clients.
	hs.stop = context.AfterFunc(p.acceptCtx, func() { loop.Post(hs.expire) })
	c.SetHandler(hs)
	hs.Ready(c)
}

// Panicked closes a client whose handshake panicked on the loop.
func (hs *loopHandshake) Panicked(c *netloop.Conn, v any) {
	hs.p.log.Warn("proxy: startup panicked on the event loop", "addr", c.RemoteAddr().String(), "panic", v)
	if !hs.over {
		hs.fail()
	}
}

// expire ends a handshake that outlived the startup timeout.
func (hs *loopHandshake) expire() {
	if !hs.over {
		hs.p.log.Debug("proxy: startup failed", "addr", hs.c.RemoteAddr().String(), "err", "startup timeout")
		hs.fail()
	}
}

// end stops the handshake's timer; the connection is someone else's now.
// hs stays its handler (doing nothing) until then, so that the loop's
// writes to it never wait.
func (hs *loopHandshake) end() {
	hs.over = true
	hs.timer.Stop()
	hs.stop()
}

// fail closes the client.
func (hs *loopHandshake) fail() {
	hs.end()
	hs.c.Close()
	hs.p.wg.Done()
}

// Ready feeds the client's bytes to the handshake, on the loop thread.
func (hs *loopHandshake) Ready(*netloop.Conn) {
	p, c := hs.p, hs.c
	for !hs.over {
		n, err := c.Read(hs.buf[:])
		if n > 0 {
			if f := p.opts.OnClientRead; f != nil {
				f(n)
			}
			out, step := hs.h.Feed(hs.buf[:n])
			if len(out) > 0 {
				if w, _ := c.Write(out); w > 0 && p.opts.OnClientWrite != nil { // never waits on the loop
					p.opts.OnClientWrite(w)
				}
			}
			if step != pgwire.StepMore {
				hs.finish(step)
				return
			}
		}
		if err == netloop.ErrWouldBlock {
			return
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				hs.p.log.Debug("proxy: startup failed", "addr", c.RemoteAddr().String(), "err", err)
			}
			hs.fail()
			return
		}
	}
}

func (hs *loopHandshake) finish(step pgwire.Step) {
	p, c := hs.p, hs.c
	switch step {
	case pgwire.StepDone:
		hs.end()
		startOnLoop(p, c, hs.h.Client(p.countClient(c)))
	case pgwire.StepAccept:
		hs.end()
		c.SetHandler(nil) // the goroutine's from here
		replay := bytes.Clone(hs.h.Replay())
		go func() {
			defer p.wg.Done()
			defer c.Close()
			p.serveSocket(c, c, replay, hs.began.Add(p.startupTimeout()))
		}()
	case pgwire.StepCancel:
		p.wg.Add(1) // before fail lets go of the connection's count: Shutdown waits for the cancel
		hs.fail()
		go func() {
			defer p.wg.Done()
			p.cancel(*hs.h.Startup().Cancel)
		}()
	default:
		if err := hs.h.Err(); !errors.Is(err, io.EOF) {
			p.log.Debug("proxy: startup failed", "addr", c.RemoteAddr().String(), "err", err)
		}
		hs.fail()
	}
}

// startOnLoop starts an authenticated client's session on the loop and
// welcomes it there when an idle server allows; the session gets a
// goroutine only when the loop hands it over (handBack).
func startOnLoop(p *Proxy, c *netloop.Conn, cl *pgwire.Client) {
	if p.isConsole(cl) {
		c.SetHandler(nil) // the goroutine's from here
		go func() {
			defer p.wg.Done()
			defer c.Close()
			defer p.recoverClient(c)
			p.opts.Console(p.consoles, cl)
		}()
		return
	}
	s := p.openSession(cl, c)
	if s == nil {
		c.Close()
		p.wg.Done()
		return
	}
	c.SetHandler(clientSide{s}) // idle until inLoop; writes never wait
	// A session-mode client (a pool mode of its own) keeps a server for
	// its whole session: its goroutine serves it.
	if !s.rename || !s.loopWelcome() {
		c.SetHandler(nil)
		go p.runFromLoop(s, false, false, nil)
		return
	}
	p.loopWelc.Add(1)
	s.lp.free = true
	s.lp.inLoop = true
	s.onClientReady()
}

// runFromLoop runs a session the loop started on a goroutine of its own
// until it ends (session.run's arguments).
func (p *Proxy) runFromLoop(s *session, welcomed, handed bool, back error) {
	defer p.wg.Done()
	defer p.recoverClient(s.client.Conn)
	defer p.closeSession(s)
	s.run(welcomed, handed, back)
}

// loopWelcome sends the welcome from the loop, as welcome does, when the
// default router's pool has an idle server with the client's settings;
// false leaves everything to welcome on a goroutine.
func (s *session) loopWelcome() bool {
	if s.p.opts.Router != nil || s.p.pausing.Load() {
		return false
	}
	s.routeGen = s.p.routeGen()
	pl, err := s.p.joinPool(route.Request{Database: s.db, User: s.user, ClientAddr: s.addr})
	if err != nil {
		return false
	}
	srv := pl.TryAcquire(s.lp.prefer)
	if srv == nil {
		pl.Leave()
		return false
	}
	sst, _ := srv.State.(*serverState)
	if sst == nil || sst.varsKey != s.varsKey {
		pl.Release(srv)
		pl.Leave()
		return false
	}
	if s.p.opts.OnAcquire != nil {
		s.p.opts.OnAcquire(pl.Name(), 0, nil)
	}
	s.pool = pl
	err = s.sendWelcome(srv, sst) // never waits on the loop
	pl.Release(srv)
	if err != nil {
		s.lp.mustRead = true // the goroutine meets the failure reading
	}
	return true
}
