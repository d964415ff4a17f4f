// Output formats: dbgen's .tbl, PostgreSQL COPY text and RFC 4180 CSV.

package tpch

import (
	"fmt"
	"strings"
)

// Format is an output encoding of generated rows.
type Format int

const (
	// FormatTbl is dbgen's own format: every field followed by '|'.
	FormatTbl Format = iota
	// FormatCopy is PostgreSQL COPY text: tab separated, backslash escapes,
	// no trailing delimiter.
	FormatCopy
	// FormatCSV is RFC 4180 CSV: comma separated, fields quoted when needed.
	FormatCSV
)

var formatNames = [...]string{"tbl", "copy", "csv"}

func (f Format) String() string {
	if f >= 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// Ext is the file name extension used for the format, without the dot.
func (f Format) Ext() string { return f.String() }

// ParseFormat maps "tbl", "copy" or "csv" to a Format.
func ParseFormat(s string) (Format, error) {
	for i, n := range formatNames {
		if strings.EqualFold(s, n) {
			return Format(i), nil
		}
	}
	return 0, fmt.Errorf("unknown format %q (want tbl, copy or csv)", s)
}

// rowBuf appends rows of one format to a byte slice. Fields are added one
// at a time; each is followed by the separator, and endRow turns the last
// separator into a newline unless the format keeps it (tbl).
type rowBuf struct {
	b    []byte
	sep  byte
	f    Format
	rows int64
}

// reset empties the buffer for reuse.
func (r *rowBuf) reset() {
	r.b = r.b[:0]
	r.rows = 0
}

func newRowBuf(f Format, capacity int) *rowBuf {
	r := &rowBuf{b: make([]byte, 0, capacity), f: f}
	switch f {
	case FormatCopy:
		r.sep = '\t'
	case FormatCSV:
		r.sep = ','
	default:
		r.sep = '|'
	}
	return r
}

func (r *rowBuf) endRow() {
	r.rows++
	if r.f == FormatTbl {
		r.b = append(r.b, '\n')
		return
	}
	r.b[len(r.b)-1] = '\n'
}

// int appends a non-negative or negative integer.
func (r *rowBuf) int(v int64) {
	r.b = appendInt(r.b, v)
	r.b = append(r.b, r.sep)
}

// money appends cents as dollars with two decimals, like dbgen's "%d.%02d".
func (r *rowBuf) money(cents int64) {
	b := r.b
	if cents < 0 {
		b = append(b, '-')
		cents = -cents
	}
	b = appendInt(b, cents/100)
	c := cents % 100
	b = append(b, '.', byte('0'+c/10), byte('0'+c%10), r.sep)
	r.b = b
}

// char appends a one-character field (flags and statuses; never special).
func (r *rowBuf) char(c byte) {
	r.b = append(r.b, c, r.sep)
}

// date appends a date given as days since 1992-01-01.
func (r *rowBuf) date(day int64) {
	d := &dateStrings[day]
	r.b = append(r.b, d[:]...)
	r.b = append(r.b, r.sep)
}

// str appends a text field, escaping or quoting it as the format needs.
func (r *rowBuf) str(s []byte) {
	switch r.f {
	case FormatCopy:
		r.b = appendCopyText(r.b, s)
	case FormatCSV:
		r.b = appendCSV(r.b, s)
	default:
		r.b = append(r.b, s...)
	}
	r.b = append(r.b, r.sep)
}

// strS is str for string values.
func (r *rowBuf) strS(s string) {
	switch r.f {
	case FormatCopy:
		r.b = appendCopyText(r.b, []byte(s))
	case FormatCSV:
		r.b = appendCSV(r.b, []byte(s))
	default:
		r.b = append(r.b, s...)
	}
	r.b = append(r.b, r.sep)
}

// copySpecial marks the bytes COPY text must escape; one table load per
// byte is measurably cheaper than four comparisons on the comment fields.
var copySpecial = [256]bool{'\\': true, '\t': true, '\n': true, '\r': true}

// appendCopyText escapes backslash, tab, newline and carriage return the
// way PostgreSQL's COPY text format expects. dbgen never produces them, so
// the fast path is a plain append.
func appendCopyText(b, s []byte) []byte {
	clean := true
	for _, c := range s {
		if copySpecial[c] {
			clean = false
			break
		}
	}
	if clean {
		return append(b, s...)
	}
	for _, c := range s {
		switch c {
		case '\\':
			b = append(b, '\\', '\\')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendCSV quotes a field that holds a comma, quote, CR or LF, doubling
// embedded quotes (RFC 4180).
func appendCSV(b, s []byte) []byte {
	quote := false
	for _, c := range s {
		if c == ',' || c == '"' || c == '\n' || c == '\r' {
			quote = true
			break
		}
	}
	if !quote {
		return append(b, s...)
	}
	b = append(b, '"')
	for _, c := range s {
		if c == '"' {
			b = append(b, '"')
		}
		b = append(b, c)
	}
	return append(b, '"')
}

// appendInt formats v in decimal without going through strconv's generic path.
func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		b = append(b, '-')
		if v == -1<<63 {
			return append(b, "9223372036854775808"...)
		}
		v = -v
	}
	if v < 10 {
		return append(b, byte('0'+v))
	}
	var tmp [20]byte
	i := len(tmp)
	for v >= 100 {
		q := v / 100
		d := v - q*100
		i -= 2
		tmp[i] = digits2[2*d]
		tmp[i+1] = digits2[2*d+1]
		v = q
	}
	if v >= 10 {
		i -= 2
		tmp[i] = digits2[2*v]
		tmp[i+1] = digits2[2*v+1]
	} else {
		i--
		tmp[i] = byte('0' + v)
	}
	return append(b, tmp[i:]...)
}

// appendPadded formats a non-negative v with at least width digits.
func appendPadded(b []byte, v int64, width int) []byte {
	var tmp [24]byte
	n := appendInt(tmp[:0], v)
	for i := len(n); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, n...)
}

const digits2 = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"
