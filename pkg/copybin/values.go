// Values: one binary field of each supported type appended to a Vector.

package copybin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

const (
	// unixToPGDays is 2000-01-01 in days since 1970-01-01.
	unixToPGDays = 10957
	// unixToPGMicros is 2000-01-01 in microseconds since 1970-01-01.
	unixToPGMicros = unixToPGDays * 86400 * 1000000
)

var errTimestampRange = errors.New("timestamp is outside DuckDB's range (290309-12-22 BC to 294247-01-10 AD)")

// maxTZOffset is the largest UTC offset, in seconds, of a timetz in
// PostgreSQL and in DuckDB (15:59:59).
const maxTZOffset = 15*3600 + 59*60 + 59

// decodeValue appends one non-NULL binary value of kind k to v; k is
// kindConv for values off the hand path, which p.conv decodes.
func decodeValue(v *Vector, p *plan, k Kind, b []byte) error {
	be := binary.BigEndian
	switch k {
	case KindInt32:
		if len(b) != 4 {
			return sizeError(k, len(b), 4)
		}
		v.Int = append(v.Int, int64(int32(be.Uint32(b))))
	case KindInt64:
		if p.oid {
			if len(b) != 4 {
				return sizeError(k, len(b), 4)
			}
			v.Int = append(v.Int, int64(be.Uint32(b)))
			break
		}
		if len(b) != 8 {
			return sizeError(k, len(b), 8)
		}
		v.Int = append(v.Int, int64(be.Uint64(b)))
	case KindInt16:
		if len(b) != 2 {
			return sizeError(k, len(b), 2)
		}
		v.Int = append(v.Int, int64(int16(be.Uint16(b))))
	case KindDecimal:
		hi, lo, err := parseNumeric(b, p.prec, p.scale)
		if err != nil {
			return err
		}
		v.Int = append(v.Int, int64(lo))
		if v.Precision > 18 {
			v.Hi = append(v.Hi, hi)
		}
	case KindText:
		if p.bpchar {
			b = trimSpaces(b)
		}
		if p.char1 {
			v.Data = appendChar(v.Data, b)
			v.Off = append(v.Off, len(v.Data))
			break
		}
		v.Data = append(v.Data, b...)
		v.Off = append(v.Off, len(v.Data))
	case KindDate:
		if len(b) != 4 {
			return sizeError(k, len(b), 4)
		}
		d := int32(be.Uint32(b))
		switch d {
		case math.MaxInt32:
			v.Int = append(v.Int, math.MaxInt32) // DuckDB's infinity
		case math.MinInt32:
			v.Int = append(v.Int, -math.MaxInt32) // DuckDB's -infinity
		default:
			v.Int = append(v.Int, int64(d)+unixToPGDays)
		}
	case KindFloat64:
		if len(b) != 8 {
			return sizeError(k, len(b), 8)
		}
		v.Float = append(v.Float, math.Float64frombits(be.Uint64(b)))
	case KindFloat32:
		if len(b) != 4 {
			return sizeError(k, len(b), 4)
		}
		v.Float = append(v.Float, float64(math.Float32frombits(be.Uint32(b))))
	case KindBool:
		if len(b) != 1 {
			return sizeError(k, len(b), 1)
		}
		v.Bool = append(v.Bool, b[0] != 0)
	case KindTimestamp, KindTimestampTZ:
		if len(b) != 8 {
			return sizeError(k, len(b), 8)
		}
		t, err := pgToUnixMicros(int64(be.Uint64(b)))
		if err != nil {
			return err
		}
		v.Int = append(v.Int, t)
	case KindTime:
		if len(b) != 8 {
			return sizeError(k, len(b), 8)
		}
		v.Int = append(v.Int, int64(be.Uint64(b)))
	case KindInterval:
		if len(b) != 16 {
			return sizeError(k, len(b), 16)
		}
		days, months := int32(be.Uint32(b[8:])), int32(be.Uint32(b[12:]))
		v.Int = append(v.Int, int64(be.Uint64(b)))
		v.Hi = append(v.Hi, int64(months)<<32|int64(uint32(days)))
	case KindJSON:
		if p.jsonb {
			if len(b) == 0 || b[0] != 1 {
				return errors.New("jsonb: unknown binary version")
			}
			b = b[1:]
		}
		v.Data = append(v.Data, b...)
		v.Off = append(v.Off, len(v.Data))
	case KindBytes:
		v.Data = append(v.Data, b...)
		v.Off = append(v.Off, len(v.Data))
	case KindUUID:
		if len(b) != 16 {
			return sizeError(k, len(b), 16)
		}
		v.Data = append(v.Data, b...)
		v.Off = append(v.Off, len(v.Data))
	case KindUint64:
		if len(b) != 8 {
			return sizeError(k, len(b), 8)
		}
		v.Int = append(v.Int, int64(be.Uint64(b)))
	case KindTimeTZ:
		if len(b) != 12 {
			return sizeError(k, len(b), 12)
		}
		// PostgreSQL keeps the zone in seconds west of UTC; DuckDB the
		// offset east.
		us, west := int64(be.Uint64(b)), int32(be.Uint32(b[8:]))
		if us < 0 || us > 86400*1000000 || west < -maxTZOffset || west > maxTZOffset {
			return fmt.Errorf("timetz of %d microseconds at zone %d s is out of range", us, west)
		}
		v.Int = append(v.Int, us)
		v.Hi = append(v.Hi, -int64(west))
	case kindConv:
		return p.conv(v, b)
	default:
		return fmt.Errorf("no decoder for kind %v", k)
	}
	return nil
}

// trimSpaces drops trailing spaces, eight at a time while it can.
func trimSpaces(b []byte) []byte {
	const spaces = 0x2020202020202020
	for len(b) >= 8 && binary.LittleEndian.Uint64(b[len(b)-8:]) == spaces {
		b = b[:len(b)-8]
	}
	for len(b) > 0 && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	return b
}

// appendChar renders a "char" byte as PostgreSQL 15 prints it: nothing for
// 0, the byte when ASCII, else a backslash and three octal digits (a lone
// high byte is not UTF-8).
func appendChar(dst, b []byte) []byte {
	if len(b) != 1 || b[0] == 0 {
		return dst
	}
	if c := b[0]; c >= 0x80 {
		return append(dst, '\\', '0'+c>>6, '0'+(c>>3)&7, '0'+c&7)
	}
	return append(dst, b[0])
}

// pgToUnixMicros moves a PostgreSQL timestamp to the Unix epoch, keeping
// ±infinity as DuckDB's ±infinity.
func pgToUnixMicros(t int64) (int64, error) {
	switch t {
	case math.MaxInt64:
		return math.MaxInt64, nil
	case math.MinInt64:
		return -math.MaxInt64, nil
	}
	if t > math.MaxInt64-1-unixToPGMicros { // adding the offset cannot underflow
		return 0, errTimestampRange
	}
	return t + unixToPGMicros, nil
}

func sizeError(k Kind, got, want int) error {
	return fmt.Errorf("%v field of %d bytes, want %d", k, got, want)
}

// decodeArray appends a one-dimensional array as one list of v.
func decodeArray(v *Vector, p *plan, b []byte) error {
	be := binary.BigEndian
	if len(b) < 12 {
		return fmt.Errorf("array: %d bytes, want at least 12", len(b))
	}
	ndim := int32(be.Uint32(b))
	elemOID := be.Uint32(b[8:])
	b = b[12:]
	e := v.Elem
	switch {
	case ndim == 0:
		// empty array
	case ndim == 1:
		if elemOID != p.elemOID {
			return fmt.Errorf("array element type oid %d, want %d", elemOID, p.elemOID)
		}
		if len(b) < 8 {
			return errors.New("array: truncated dimension")
		}
		n, lbound := int32(be.Uint32(b)), int32(be.Uint32(b[4:]))
		b = b[8:]
		if lbound != 1 {
			return fmt.Errorf("array lower bound %d: DuckDB lists start at 1, so the subscripts would change", lbound)
		}
		if n < 0 || int(n) > len(b)/4 {
			return fmt.Errorf("array: bad length %d", n)
		}
		for i := int32(0); i < n; i++ {
			if len(b) < 4 {
				return errors.New("array: truncated element length")
			}
			l := int32(be.Uint32(b))
			b = b[4:]
			if l == -1 {
				e.appendNull()
				continue
			}
			if l < 0 || int(l) > len(b) {
				return fmt.Errorf("array: bad element length %d", l)
			}
			if err := decodeValue(e, p, p.elemDecode, b[:l]); err != nil {
				return fmt.Errorf("array element %d: %w", i+1, err)
			}
			b = b[l:]
		}
	default:
		return fmt.Errorf("%d-dimensional array: only one-dimensional arrays become DuckDB lists", ndim)
	}
	if len(b) != 0 {
		return fmt.Errorf("array: %d trailing bytes", len(b))
	}
	v.ListOff = append(v.ListOff, e.Len())
	return nil
}
