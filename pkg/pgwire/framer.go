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

// Framer reads regular protocol messages (1 type byte, a 4-byte big-endian
// length that counts itself, the body) from a stream. It buffers its reader,
// so once a Framer reads a connection nothing else should.
//
// A body longer than the bound is an *OversizeError naming the type and the
// length; nothing is allocated for it and the stream is left just after the
// header, so the caller should report it and close. The buffer grows to the
// largest message seen, never beyond the bound. A stream that ends inside a message is io.ErrUnexpectedEOF; one
// that ends on a message boundary is io.EOF.
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
	return &Framer{r: br, max: maxMessage, buf: make([]byte, 0, 512)}
}

// Next reads the next message. body is valid until the next call to Next.
func (f *Framer) Next() (typ byte, body []byte, err error) {
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
	if cap(f.buf) < size {
		nb := make([]byte, size, min(max(size, 2*cap(f.buf)), 5+f.max))
		copy(nb, f.buf[:5])
		f.buf = nb
	} else {
		f.buf = f.buf[:size]
	}
	if _, err := io.ReadFull(f.r, f.buf[5:]); err != nil {
		f.buf = f.buf[:0]
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return typ, nil, err
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
