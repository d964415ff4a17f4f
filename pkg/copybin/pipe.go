// Pipe: hands a COPY stream from pgconn's writer to a Decoder in big blocks.

package copybin

import (
	"errors"
	"io"
	"sync"
)

// Pipe connects pgconn.PgConn.CopyTo, which calls Write once per row, to a
// Decoder reading in another goroutine. Unlike io.Pipe, it gathers the small
// writes into blocks, so the two goroutines meet once per block instead of
// once per row. One goroutine writes (then calls CloseWrite), one reads.
type Pipe struct {
	full chan []byte
	free chan []byte
	done chan struct{} // closed by CloseRead

	cur []byte // block the writer fills

	rd      []byte // unread part of the reader's block
	rdBlock []byte // the reader's block, returned to free when read

	werr     error // set before full is closed
	rerr     error // set before done is closed
	doneOnce sync.Once
}

const (
	pipeBlock  = 1 << 20
	pipeBlocks = 4
)

// ErrPipeClosed is what Write returns after CloseRead(nil).
var ErrPipeClosed = errors.New("copybin: read side of pipe closed")

// NewPipe returns an empty pipe.
func NewPipe() *Pipe {
	p := &Pipe{full: make(chan []byte, pipeBlocks), free: make(chan []byte, pipeBlocks+1), done: make(chan struct{})}
	for range pipeBlocks {
		p.free <- make([]byte, 0, pipeBlock)
	}
	return p
}

// Write copies b into the pipe; it blocks while all blocks are in flight.
func (p *Pipe) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		if p.cur == nil {
			select {
			case p.cur = <-p.free:
			case <-p.done:
				return n, p.readErr()
			}
		}
		c := copy(p.cur[len(p.cur):cap(p.cur)], b)
		p.cur = p.cur[:len(p.cur)+c]
		b = b[c:]
		n += c
		if len(p.cur) == cap(p.cur) {
			if err := p.send(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

func (p *Pipe) send() error {
	select {
	case p.full <- p.cur:
		p.cur = nil
		return nil
	case <-p.done:
		return p.readErr()
	}
}

func (p *Pipe) readErr() error {
	if p.rerr != nil {
		return p.rerr
	}
	return ErrPipeClosed
}

// CloseWrite ends the stream: the reader gets the buffered data and then
// err, or io.EOF when err is nil.
func (p *Pipe) CloseWrite(err error) error {
	var serr error
	if len(p.cur) > 0 {
		serr = p.send()
	}
	p.werr = err
	close(p.full)
	return serr
}

// Read reads from the current block, waiting for the next when it is used up.
func (p *Pipe) Read(b []byte) (int, error) {
	for len(p.rd) == 0 {
		if p.rdBlock != nil {
			p.free <- p.rdBlock[:0]
			p.rdBlock = nil
		}
		blk, ok := <-p.full
		if !ok {
			if p.werr != nil {
				return 0, p.werr
			}
			return 0, io.EOF
		}
		p.rd, p.rdBlock = blk, blk
	}
	n := copy(b, p.rd)
	p.rd = p.rd[n:]
	return n, nil
}

// CloseRead stops the writer: its pending and later Writes fail with err
// (ErrPipeClosed when nil). Safe to call more than once.
func (p *Pipe) CloseRead(err error) {
	p.doneOnce.Do(func() {
		p.rerr = err
		close(p.done)
	})
}
