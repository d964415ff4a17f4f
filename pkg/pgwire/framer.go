// Framer: reads one protocol message at a time, bounded, into a reused buffer.

package pgwire

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// DefaultMaxMessage is the body bound NewFramer uses when given 0 or less.
const DefaultMaxMessage = 1 << 20

// LargeMessage is PostgreSQL's own bound on a client message body (Query,
// Parse, Bind, CopyData...: MaxAllocSize - 1), for servers that must take
// whatever PostgreSQL takes.
const LargeMessage = 0x3fffffff - 1

// keepBuffer is the buffer capacity kept between messages; a larger one,
// grown for one big message, is dropped before the next.
const keepBuffer = 1 << 20

// Framer reads regular protocol messages (1 type byte, a 4-byte big-endian
// length that counts itself, the body) from a stream. It buffers its reader,
// so once a Framer reads a connection nothing else should.
//
// A body longer than the bound is an *OversizeError naming the type and the
// length; nothing is allocated for it and the stream is left just after the
// header, so the caller should report it and close. The buffer grows to the
// largest message seen (at most keepBuffer is kept between messages),
// never beyond the bound, and only as the bytes arrive: a length alone
// costs no memory. A stream that ends inside a message is
// io.ErrUnexpectedEOF; one that ends on a message boundary is io.EOF.
type Framer struct {
	r   *bufio.Reader
	max int
	buf []byte // header and body of the last message; reused
}

// NewFramer returns a Framer reading r with bodies bounded to maxMessage
// bytes (DefaultMaxMessage when maxMessage <= 0). If r is a *bufio.Reader
// it is used as is.
func NewFramer(r io.Reader, maxMessage int) *Framer {
	if maxMessage <= 0 {
		maxMessage = DefaultMaxMessage
	}
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 16<<10)
	}
	return &Framer{r: br, max: maxMessage} // buf on the first message: many sessions never frame one
}

// Next reads the next message. body is valid until the next call to Next.
func (f *Framer) Next() (typ byte, body []byte, err error) {
	if cap(f.buf) > keepBuffer || cap(f.buf) < 5 {
		f.buf = make([]byte, 0, 512)
	}
	f.buf = f.buf[:5]
	if _, err := io.ReadFull(f.r, f.buf); err != nil {
		f.buf = f.buf[:0]
		return 0, nil, err // io.EOF on a boundary, io.ErrUnexpectedEOF inside a header
	}
	typ = f.buf[0]
	n := int64(binary.BigEndian.Uint32(f.buf[1:5])) // as unsigned: no overflow on 32-bit ints
	if n < 4 {
		f.buf = f.buf[:0]
		return typ, nil, &FrameError{Type: typ, Length: n}
	}
	if n-4 > int64(f.max) {
		f.buf = f.buf[:0]
		return typ, nil, &OversizeError{Type: typ, Length: n - 4, Max: f.max}
	}
	size := 5 + int(n-4)
	for len(f.buf) < size {
		if len(f.buf) == cap(f.buf) {
			// Grow with what has arrived, doubling, from 64 KiB.
			nb := make([]byte, len(f.buf), min(max(2*cap(f.buf), 64<<10), size))
			copy(nb, f.buf)
			f.buf = nb
		}
		m, err := io.ReadAtLeast(f.r, f.buf[len(f.buf):min(cap(f.buf), size)], 1)
		f.buf = f.buf[:len(f.buf)+m]
		if err != nil {
			f.buf = f.buf[:0]
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return typ, nil, err
		}
	}
	return typ, f.buf[5:], nil
}

// Message is the whole last message Next returned, its 5-byte header
// included, ready to forward unchanged. It is valid until the next call to
// Next and empty after an error.
func (f *Framer) Message() []byte { return f.buf }

// Buffered is how many bytes the Framer has read from its reader beyond the
// last message.
func (f *Framer) Buffered() int { return f.r.Buffered() }

// OversizeError is a message whose body is longer than the Framer's bound.
type OversizeError struct {
	Type   byte
	Length int64 // of the body
	Max    int
}

func (e *OversizeError) Error() string {
	return fmt.Sprintf("pgwire: message type %s has a %d-byte body, more than the %d allowed", typeName(e.Type), e.Length, e.Max)
}

// FrameError is a message header whose length cannot be right (under 4).
type FrameError struct {
	Type   byte
	Length int64
}

func (e *FrameError) Error() string {
	return fmt.Sprintf("pgwire: message type %s has invalid length %d", typeName(e.Type), e.Length)
}

func typeName(t byte) string {
	if t >= 0x20 && t < 0x7f {
		return fmt.Sprintf("'%c'", t)
	}
	return fmt.Sprintf("0x%02x", t)
}
