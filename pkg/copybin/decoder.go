// Decoder: the COPY BINARY framing (header, tuples, trailer) over a buffer.

package copybin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// signature starts every COPY BINARY stream.
var signature = []byte("PGCOPY\n\xff\r\n\x00")

// Decoder reads one COPY BINARY stream. It is not safe for concurrent use.
type Decoder struct {
	// Table names the source in error messages; optional.
	Table string

	r     io.Reader
	cols  []Column
	plans []plan

	buf      []byte
	pos, end int
	base     int64 // stream offset of buf[0]
	row      int64
	started  bool
	done     bool
	err      error // sticky
}

const minBuf = 256 << 10

// NewDecoder checks that every column can be decoded and prepares to read r.
// The header is read by the first Next.
func NewDecoder(r io.Reader, cols []Column) (*Decoder, error) {
	d := &Decoder{r: r, cols: cols, plans: make([]plan, len(cols)), buf: make([]byte, minBuf)}
	for i, c := range cols {
		p, err := planFor(c)
		if err != nil {
			return nil, err
		}
		d.plans[i] = p
	}
	return d, nil
}

// Rows is the number of rows decoded so far.
func (d *Decoder) Rows() int64 { return d.row }

// Next decodes up to max rows into b, replacing its contents, and returns
// how many it decoded. After the trailer it returns 0, io.EOF. Any other
// error is a *DecodeError (or wraps the reader's error) and is returned
// again by later calls; b's contents are then undefined.
func (d *Decoder) Next(b *Batch, max int) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	initBatch(b, d.plans)
	if d.done {
		return 0, io.EOF
	}
	if !d.started {
		if err := d.header(); err != nil {
			d.err = err
			return 0, err
		}
		d.started = true
	}
	for b.Len < max {
		if err := d.fill(2); err != nil {
			d.err = d.fail("", fmt.Errorf("reading tuple header: %w", err))
			return 0, d.err
		}
		n := int16(binary.BigEndian.Uint16(d.buf[d.pos:]))
		if n == -1 {
			d.pos += 2
			d.done = true
			break
		}
		if int(n) != len(d.cols) {
			d.err = d.fail("", fmt.Errorf("tuple has %d fields, want %d", n, len(d.cols)))
			return 0, d.err
		}
		d.pos += 2
		for i := range d.plans {
			if err := d.field(&b.Cols[i], &d.plans[i]); err != nil {
				d.err = d.fail(d.cols[i].Name, err)
				return 0, d.err
			}
		}
		b.Len++
		d.row++
	}
	if b.Len == 0 && d.done {
		return 0, io.EOF
	}
	return b.Len, nil
}

// header checks the signature, flags and skips the header extension.
func (d *Decoder) header() error {
	if err := d.fill(19); err != nil {
		return d.fail("", fmt.Errorf("reading header: %w", err))
	}
	if !bytes.Equal(d.buf[d.pos:d.pos+11], signature) {
		return d.fail("", errors.New("not a COPY BINARY stream (bad signature)"))
	}
	flags := binary.BigEndian.Uint32(d.buf[d.pos+11:])
	if flags&(1<<16) != 0 {
		return d.fail("", errors.New("stream includes OIDs (WITH OIDS), which is not supported"))
	}
	if flags&^uint32(0xffff) != 0 {
		return d.fail("", fmt.Errorf("unknown critical header flags %#x", flags))
	}
	ext := int32(binary.BigEndian.Uint32(d.buf[d.pos+15:]))
	if ext < 0 {
		return d.fail("", fmt.Errorf("negative header extension length %d", ext))
	}
	d.pos += 19
	for ext > 0 { // skip without needing it all in the buffer
		if err := d.fill(1); err != nil {
			return d.fail("", fmt.Errorf("reading header extension: %w", err))
		}
		n := min(int(ext), d.end-d.pos)
		d.pos += n
		ext -= int32(n)
	}
	return nil
}

// field decodes one field of the current tuple into v.
func (d *Decoder) field(v *Vector, p *plan) error {
	if err := d.fill(4); err != nil {
		return fmt.Errorf("reading field length: %w", err)
	}
	n := int32(binary.BigEndian.Uint32(d.buf[d.pos:]))
	d.pos += 4
	if n == -1 {
		v.appendNull()
		return nil
	}
	if n < 0 {
		return fmt.Errorf("bad field length %d", n)
	}
	if err := d.fill(int(n)); err != nil {
		return fmt.Errorf("reading %d-byte field: %w", n, err)
	}
	data := d.buf[d.pos : d.pos+int(n)]
	d.pos += int(n)
	if p.kind == KindList {
		return decodeArray(v, p, data)
	}
	return decodeValue(v, p, p.kind, data)
}

// fail wraps err with the current place in the stream.
func (d *Decoder) fail(col string, err error) error {
	var re *readError
	if errors.As(err, &re) {
		return fmt.Errorf("copy binary stream: %w", re.err)
	}
	return &DecodeError{Table: d.Table, Column: col, Row: d.row, Offset: d.base + int64(d.pos), Err: err}
}

// readError carries a failure of the underlying reader (not of the data).
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// fill makes sure n bytes are buffered at d.pos.
func (d *Decoder) fill(n int) error {
	if d.end-d.pos >= n {
		return nil
	}
	return d.refill(n)
}

func (d *Decoder) refill(n int) error {
	if n > len(d.buf) {
		nb := make([]byte, max(n, 2*len(d.buf)))
		copy(nb, d.buf[d.pos:d.end])
		d.buf = nb
	} else {
		copy(d.buf, d.buf[d.pos:d.end])
	}
	d.base += int64(d.pos)
	d.end -= d.pos
	d.pos = 0
	for d.end < n {
		m, err := d.r.Read(d.buf[d.end:])
		d.end += m
		if d.end >= n {
			return nil
		}
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		if err != nil {
			return &readError{err}
		}
	}
	return nil
}
