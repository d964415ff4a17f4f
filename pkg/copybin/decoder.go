// Decoder: the COPY BINARY framing (header, tuples, trailer) over a buffer.

package copybin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgtype"
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

const (
	minBuf   = 256 << 10
	maxField = 1 << 30 // PostgreSQL's largest datum
)

// NewDecoder checks that every column can be decoded and prepares to read r.
// The header is read by the first Next.
func NewDecoder(r io.Reader, cols []Column) (*Decoder, error) {
	d := &Decoder{r: r, cols: cols, plans: make([]plan, len(cols)), buf: make([]byte, minBuf)}
	var m *pgtype.Map // only for types off the hand path; not safe to share between decoders
	pgMap := func() *pgtype.Map {
		if m == nil {
			m = pgtype.NewMap()
		}
		return m
	}
	for i, c := range cols {
		p, err := planFor(c)
		if err != nil {
			return nil, err
		}
		if p.conv = newConv(&p, pgMap); p.conv != nil {
			if p.kind == KindList {
				p.elemDecode = kindConv
			} else {
				p.decode = kindConv
			}
		}
		d.plans[i] = p
	}
	return d, nil
}

// Rows is the number of rows decoded so far.
func (d *Decoder) Rows() int64 { return d.row }

// DefaultBatchRows is DuckDB's vector size, a good batch size for the
// appender; Next uses it when max is not positive.
const DefaultBatchRows = 2048

// Next decodes up to max rows into b, replacing its contents, and returns
// how many it decoded. After the trailer it returns 0, io.EOF. Any other
// error is a *DecodeError (or wraps the reader's error) and is returned
// again by later calls; b's contents are then undefined.
func (d *Decoder) Next(b *Batch, max int) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if max <= 0 {
		max = DefaultBatchRows
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
		need, err := d.tuple(b)
		if err != nil {
			d.err = err
			return 0, err
		}
		if d.done {
			if err := d.checkEnd(); err != nil {
				d.err = err
				return 0, err
			}
			break
		}
		if need > 0 {
			// The tuple runs past the buffer: undo its fields and read more.
			for i := range b.Cols {
				b.Cols[i].truncate(b.Len)
			}
			if err := d.refill(need); err != nil {
				d.err = d.fail("", fmt.Errorf("reading tuple: %w", err))
				return 0, d.err
			}
			continue
		}
		b.Len++
		d.row++
	}
	for i := range b.Cols {
		b.Cols[i].fillNulls()
	}
	if err := d.checkUTF8(b); err != nil {
		d.err = err
		return 0, err
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

// checkEnd makes sure nothing follows the trailer: PostgreSQL's COPY FROM
// fails such a stream ("received copy data after EOF marker"), and rows
// after it would be lost without a word.
func (d *Decoder) checkEnd() error {
	if d.pos < d.end {
		return d.fail("", fmt.Errorf("%d bytes of data after the COPY trailer", d.end-d.pos))
	}
	var one [1]byte
	switch n, err := io.ReadFull(d.r, one[:]); {
	case n > 0:
		return d.fail("", errors.New("data after the COPY trailer"))
	case err != io.EOF:
		return d.fail("", fmt.Errorf("reading past the COPY trailer: %w", err))
	}
	return nil
}

// tuple decodes the tuple at d.pos from the buffer alone. When the buffer
// ends first it returns how many bytes from d.pos it needs, leaving d.pos
// unchanged and the vectors partly filled.
func (d *Decoder) tuple(b *Batch) (need int, err error) {
	buf, start := d.buf[:d.end], d.pos
	if len(buf)-start < 2 {
		return 2, nil
	}
	n := int16(binary.BigEndian.Uint16(buf[start:]))
	if n == -1 {
		d.pos += 2
		d.done = true
		return 0, nil
	}
	if int(n) != len(d.cols) {
		return 0, d.fail("", fmt.Errorf("tuple has %d fields, want %d", n, len(d.cols)))
	}
	pos := start + 2
	plans, cols := d.plans, b.Cols[:len(d.plans)]
	for i := range plans {
		if len(buf)-pos < 4 {
			return pos + 4 - start, nil
		}
		l := int32(binary.BigEndian.Uint32(buf[pos:]))
		v, p := &cols[i], &plans[i]
		if l < 0 {
			if l != -1 {
				d.pos = pos
				return 0, d.fail(d.cols[i].Name, fmt.Errorf("bad field length %d", l))
			}
			pos += 4
			v.appendNull()
			continue
		}
		if l > maxField {
			d.pos = pos
			return 0, d.fail(d.cols[i].Name, fmt.Errorf("field length %d exceeds PostgreSQL's 1 GB limit", l))
		}
		if len(buf)-pos-4 < int(l) {
			return pos + 4 + int(l) - start, nil
		}
		data := buf[pos+4 : pos+4+int(l)]
		// The commonest kinds are decoded here, saving a call per field.
		switch {
		case p.kind == KindInt32 && l == 4:
			v.Int = append(v.Int, int64(int32(binary.BigEndian.Uint32(data))))
		case p.kind == KindInt64 && l == 8 && !p.oid:
			v.Int = append(v.Int, int64(binary.BigEndian.Uint64(data)))
		case p.kind == KindDate && l == 4 && finiteDate(data):
			v.Int = append(v.Int, int64(int32(binary.BigEndian.Uint32(data)))+unixToPGDays)
		case p.kind == KindList:
			err = decodeArray(v, p, data)
		default:
			err = decodeValue(v, p, p.decode, data)
		}
		if err != nil {
			d.pos = pos
			return 0, d.fail(d.cols[i].Name, err)
		}
		pos += 4 + int(l)
	}
	d.pos = pos
	return 0, nil
}

// checkUTF8 makes sure every text and json value of the batch is UTF-8, as
// DuckDB's VARCHAR requires. It checks a column's bytes in one pass and only
// looks at single values when that pass finds a non-ASCII byte.
func (d *Decoder) checkUTF8(b *Batch) error {
	for i := range b.Cols {
		v := &b.Cols[i]
		if v.Kind == KindList {
			v = v.Elem
		}
		if v.Kind != KindText && v.Kind != KindJSON {
			continue
		}
		rowOf := func(j int) int64 {
			row := j
			if b.Cols[i].Kind == KindList { // find the list holding element j
				for row = 0; b.Cols[i].ListOff[row+1] <= j; row++ {
				}
			}
			return d.row - int64(b.Len) + int64(row)
		}
		if v.Kind == KindJSON && bytes.Contains(v.Data, []byte(`\u`)) {
			for j := range v.Len() {
				if loneSurrogate(v.Bytes(j)) {
					return &DecodeError{Table: d.Table, Column: d.cols[i].Name, Row: rowOf(j), Offset: -1,
						Err: errors.New(`json holds a \u escape of an unpaired UTF-16 surrogate (\ud800-\udfff), which PostgreSQL's json accepts and DuckDB's JSON cannot read`)}
				}
			}
		}
		if isASCII(v.Data) {
			continue
		}
		for j := range v.Len() {
			if !utf8.Valid(v.Bytes(j)) {
				return &DecodeError{Table: d.Table, Column: d.cols[i].Name, Row: rowOf(j), Offset: -1,
					Err: errors.New("text is not valid UTF-8, which DuckDB VARCHAR and JSON require; is the database encoding UTF8?")}
			}
		}
	}
	return nil
}

// loneSurrogate tells whether JSON text b has a \u escape of a UTF-16
// surrogate that is not a high one followed by a low one.
func loneSurrogate(b []byte) bool {
	pending := false // the previous escape was a high surrogate
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			if pending {
				return true
			}
			continue
		}
		if i+1 >= len(b) {
			return pending
		}
		if b[i+1] != 'u' {
			if pending {
				return true
			}
			i++ // \\, \" and the rest: one escaped character
			continue
		}
		if i+6 > len(b) {
			return false // not valid JSON, which PostgreSQL does not store
		}
		u, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
		if err != nil {
			return false
		}
		i += 5
		switch {
		case u >= 0xd800 && u <= 0xdbff:
			if pending {
				return true
			}
			pending = true
		case u >= 0xdc00 && u <= 0xdfff:
			if !pending {
				return true
			}
			pending = false
		default:
			if pending {
				return true
			}
		}
	}
	return pending
}

// isASCII reports whether b has no byte above 0x7f, eight bytes at a time.
func isASCII(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// finiteDate reports that a 4-byte date is not ±infinity.
func finiteDate(b []byte) bool {
	d := int32(binary.BigEndian.Uint32(b))
	return d != math.MaxInt32 && d != math.MinInt32
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
	copy(d.buf, d.buf[d.pos:d.end])
	d.base += int64(d.pos)
	d.end -= d.pos
	d.pos = 0
	for d.end < n {
		if d.end == len(d.buf) {
			// Grow only as data arrives, so a corrupt length cannot make
			// the decoder allocate more than the stream holds.
			nb := make([]byte, min(2*len(d.buf), max(n, minBuf)))
			copy(nb, d.buf[:d.end])
			d.buf = nb
		}
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
