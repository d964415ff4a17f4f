// Tests of the Framer: messages in order, bounds, truncation, buffer reuse; and FuzzFramer.

package pgwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

func msg(typ byte, body string) []byte {
	b := []byte{typ}
	b = binary.BigEndian.AppendUint32(b, uint32(4+len(body)))
	return append(b, body...)
}

func TestFramerReadsMessagesInOrder(t *testing.T) {
	stream := bytes.Join([][]byte{msg('Q', "select 1\x00"), msg('S', ""), msg('X', "")}, nil)
	f := NewFramer(bytes.NewReader(stream), 64)
	for _, want := range []struct {
		typ  byte
		body string
	}{{'Q', "select 1\x00"}, {'S', ""}, {'X', ""}} {
		typ, body, err := f.Next()
		if err != nil {
			t.Fatal(err)
		}
		if typ != want.typ || string(body) != want.body {
			t.Fatalf("got %c %q, want %c %q", typ, body, want.typ, want.body)
		}
		if !bytes.Equal(f.Message(), msg(want.typ, want.body)) {
			t.Fatalf("Message() = %q", f.Message())
		}
	}
	if _, _, err := f.Next(); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
}

func TestFramerOversize(t *testing.T) {
	stream := append(msg('P', string(make([]byte, 100))), msg('S', "")...)
	f := NewFramer(bytes.NewReader(stream), 99)
	_, _, err := f.Next()
	var oe *OversizeError
	if !errors.As(err, &oe) || oe.Type != 'P' || oe.Length != 100 || oe.Max != 99 {
		t.Fatalf("got %v", err)
	}
	if want := "pgwire: message type 'P' has a 100-byte body, more than the 99 allowed"; err.Error() != want {
		t.Fatalf("message %q, want %q", err, want)
	}
	// A 4 GB claim is refused without reading or allocating it.
	huge := []byte{'d', 0xff, 0xff, 0xff, 0xff}
	_, _, err = NewFramer(bytes.NewReader(huge), 0).Next()
	if !errors.As(err, &oe) || oe.Length != 0xffffffff-4 {
		t.Fatalf("got %v", err)
	}
}

func TestFramerBadLength(t *testing.T) {
	_, _, err := NewFramer(bytes.NewReader([]byte{'Q', 0, 0, 0, 3}), 0).Next()
	var fe *FrameError
	if !errors.As(err, &fe) || fe.Type != 'Q' || fe.Length != 3 {
		t.Fatalf("got %v", err)
	}
}

func TestFramerTruncated(t *testing.T) {
	full := msg('Q', "select 1\x00")
	for n := 1; n < len(full); n++ {
		_, _, err := NewFramer(bytes.NewReader(full[:n]), 0).Next()
		if err != io.ErrUnexpectedEOF {
			t.Fatalf("cut at %d: %v, want io.ErrUnexpectedEOF", n, err)
		}
	}
}

func TestFramerReusesItsBuffer(t *testing.T) {
	one := msg('Q', "select 1\x00")
	stream := bytes.Repeat(one, 1000)
	r := bytes.NewReader(stream)
	f := NewFramer(r, 0)
	allocs := testing.AllocsPerRun(500, func() {
		if _, _, err := f.Next(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per message", allocs)
	}
}

func FuzzFramer(f *testing.F) {
	f.Add(msg('Q', "select 1\x00"))
	f.Add(append(msg('P', "\x00select $1\x00\x00\x00"), msg('S', "")...))
	f.Add([]byte{'d', 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{'Q', 0, 0, 0, 2})
	f.Add(msg('X', "")[:3])
	f.Fuzz(func(t *testing.T, data []byte) {
		const max = 256
		fr := NewFramer(bytes.NewReader(data), max)
		read := 0
		for {
			typ, body, err := fr.Next()
			if err != nil {
				if err == io.EOF && read != len(data) {
					t.Fatalf("io.EOF after %d of %d bytes", read, len(data))
				}
				return
			}
			if len(body) > max {
				t.Fatalf("%d-byte body over the %d bound", len(body), max)
			}
			m := fr.Message()
			if m[0] != typ || !bytes.Equal(m[5:], body) || !bytes.Equal(m, data[read:read+len(m)]) {
				t.Fatalf("Message() does not match the input at %d", read)
			}
			read += len(m)
		}
	})
}

// A big message is read whole; the buffer grew only with the bytes that
// came, and is not kept for the next message.
func TestFramerLargeMessages(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 3<<20)
	stream := bytes.Join([][]byte{msg('Q', string(big)), msg('S', "")}, nil)
	f := NewFramer(bytes.NewReader(stream), LargeMessage)
	typ, body, err := f.Next()
	if err != nil || typ != 'Q' || !bytes.Equal(body, big) {
		t.Fatalf("big: %q %d %v", typ, len(body), err)
	}
	if typ, _, err := f.Next(); err != nil || typ != 'S' || cap(f.buf) > keepBuffer {
		t.Fatalf("after big: %q %v, buffer cap %d", typ, err, cap(f.buf))
	}
	// A length of 500 MB with 10 bytes behind it allocates next to nothing.
	hdr := []byte{'Q'}
	hdr = binary.BigEndian.AppendUint32(hdr, 500<<20)
	f = NewFramer(bytes.NewReader(append(hdr, "0123456789"...)), LargeMessage)
	if _, _, err := f.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut big message: %v", err)
	}
	if cap(f.buf) > 64<<10 {
		t.Fatalf("a bare length grew the buffer to %d", cap(f.buf))
	}
}
