// The fast path on stdio: a reader in front of mcp-go's StdioServer answers
// the lines the fast path recognises and passes every other line on, in
// order, through a pipe; both sides write whole lines to stdout under one
// lock.

package mcpserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Like mcp-go's StdioServer: tool calls run on this many workers behind a
// queue this long, and when the queue is full on the reading goroutine.
const (
	stdioWorkers = 5
	stdioQueue   = 100
)

// serveStdio serves s on in and out until in ends (nil) or ctx ends
// (ctx's error), as server.NewStdioServer(s).Listen does, with f as the
// fast path (nil: none). Like mcp-go, it cancels the calls in flight when
// in ends and waits for their replies.
func serveStdio(ctx context.Context, s *server.MCPServer, f *fastPath, in io.Reader, out io.Writer, errLog *log.Logger) error {
	stdio := server.NewStdioServer(s)
	stdio.SetErrorLogger(errLog)
	if f == nil {
		return stdio.Listen(ctx, in, out)
	}
	w := &lineWriter{w: out}
	pr, pw := io.Pipe()
	// Listen calls the context function once, with the context of the
	// stdio session; the fast path's calls get the same.
	sessionCtx := make(chan context.Context, 1)
	stdio.SetContextFunc(func(c context.Context) context.Context {
		sessionCtx <- c
		return c
	})
	listened := make(chan error, 1)
	go func() {
		err := stdio.Listen(ctx, pr, w)
		pr.CloseWithError(errStdioDone)
		listened <- err
	}()
	var base context.Context
	select {
	case base = <-sessionCtx:
	case err := <-listened:
		return err
	}
	base, cancel := context.WithCancel(base)
	defer cancel()
	front := &stdioFront{s: s, f: f, w: w, errLog: errLog, ctx: base,
		session: server.ClientSessionFromContext(base), jobs: make(chan *fastCall, stdioQueue)}
	for range stdioWorkers {
		front.workers.Go(front.work)
	}
	go func() {
		front.read(in, pw)
		cancel() // input ended: as mcp-go, cancel the calls in flight
	}()
	err := <-listened
	cancel()
	front.stop()
	return err
}

// errStdioDone ends the reader's writes to mcp-go once Listen returned.
var errStdioDone = errors.New("mcpserver: stdio server stopped")

// stdioFront is the reading side of serveStdio.
type stdioFront struct {
	s       *server.MCPServer
	f       *fastPath
	w       *lineWriter
	errLog  *log.Logger
	ctx     context.Context // the stdio session's, cancelled when input ends
	session server.ClientSession

	mu      sync.Mutex // guards closed against read sending on jobs
	closed  bool
	jobs    chan *fastCall
	workers sync.WaitGroup
}

// read reads lines from in until it ends, answering the ones the fast path
// recognises and writing every other one to mcp-go; it closes mcp-go's
// input with the way in ended.
func (fr *stdioFront) read(in io.Reader, toMCP *io.PipeWriter) {
	br := bufio.NewReader(in)
	for {
		line, tooLong, err := readLine(br, MaxRequestBytes)
		if tooLong {
			// As over HTTP (413): the line is skipped, not buffered.
			fr.w.Write(append(errorReply(nil, mcp.INVALID_REQUEST,
				fmt.Sprintf("Invalid Request: a message is at most %d bytes", MaxRequestBytes)), '\n'))
			continue
		}
		if err != nil {
			// A last line without a newline goes to mcp-go, which drops
			// it at the end of input as it would have.
			if len(line) > 0 {
				toMCP.Write(line)
			}
			toMCP.CloseWithError(err) // io.EOF reads as a clean end
			return
		}
		c := new(fastCall)
		if fr.f.recognise(fr.s, fr.session, line, c, true) {
			fr.dispatch(c)
			continue
		}
		if _, err := toMCP.Write(line); err != nil {
			return // mcp-go has stopped
		}
		if id, ok := cancelledID(line); ok {
			fr.f.cancelInflight(inflightKey(fr.session, id))
		}
	}
}

// dispatch queues c for the workers, or runs it here when the queue is
// full, as mcp-go does with its tool calls. c is in flight from here on,
// so that a notifications/cancelled reaches it while it waits in the
// queue too.
func (fr *stdioFront) dispatch(c *fastCall) {
	fr.mu.Lock()
	if fr.closed || fr.ctx.Err() != nil {
		fr.mu.Unlock()
		return
	}
	c.ctx = fr.f.start(fr.ctx, c, fr.session)
	select {
	case fr.jobs <- c:
		fr.mu.Unlock()
		return
	default:
	}
	fr.mu.Unlock()
	fr.errLog.Printf("Tool call queue full, processing synchronously")
	fr.run(c, "stdio message handler")
}

func (fr *stdioFront) work() {
	for c := range fr.jobs {
		fr.run(c, "stdio tool call worker")
	}
}

// stop lets the workers finish the queued calls (skipping the cancelled
// ones, which input ending cancels all) and waits for them.
func (fr *stdioFront) stop() {
	fr.mu.Lock()
	if !fr.closed {
		fr.closed = true
		close(fr.jobs)
	}
	fr.mu.Unlock()
	fr.workers.Wait()
}

// run answers c and writes the reply; a panicking tool gets mcp-go's
// internal-error reply, and the panic is logged where mcp-go logs it. A
// call cancelled while it waited is dropped without a reply, as MCP asks
// of a cancelled request (its statement never runs).
func (fr *stdioFront) run(c *fastCall, where string) {
	if c.ctx.Err() != nil {
		fr.f.finish(c)
		return
	}
	out := fr.f.serveStarted(c.ctx, c, fr.session, func(r any) { fr.errLog.Printf("panic recovered in %s: %v", where, r) })
	if out == nil {
		return
	}
	if _, err := fr.w.Write(append(out, '\n')); err != nil {
		fr.errLog.Printf("Error writing tool response: %v", err)
	}
}

// lineWriter serializes whole-message writes to stdout: mcp-go writes
// each message with one Write, and so does the fast path.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// readLine reads one line of at most max bytes; a longer one is consumed
// to its end and reported as tooLong, without holding it in memory.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err != bufio.ErrBufferFull {
			if tooLong && err == nil {
				return nil, true, nil
			}
			return line, false, err
		}
	}
}
