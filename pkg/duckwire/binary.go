// Binary format: values in PostgreSQL's send/recv representation, appended to a buffer.

package duckwire

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/qpkit/qpkit/pkg/pgwire"
)

// pgEpoch is PostgreSQL's epoch for dates and timestamps.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

const pgEpochUnixDays = 10957 // days from 1970-01-01 to 2000-01-01

// canBinary reports whether t has a binary encoder here.
func canBinary(t *pgType) bool {
	switch t.oid {
	case pgwire.OIDText:
		return t.elem == nil
	}
	if t.elem != nil {
		return canBinary(t.elem)
	}
	return true
}

// appendBinary appends v (non-nil) as t in binary format.
func appendBinary(dst []byte, v any, t *pgType, loc *time.Location) ([]byte, error) {
	switch t.oid {
	case pgwire.OIDBool:
		if b, ok := v.(bool); ok && b {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case pgwire.OIDInt2:
		n, err := toInt64(v)
		return binary.BigEndian.AppendUint16(dst, uint16(n)), err
	case pgwire.OIDInt4:
		n, err := toInt64(v)
		return binary.BigEndian.AppendUint32(dst, uint32(n)), err
	case pgwire.OIDInt8:
		n, err := toInt64(v)
		return binary.BigEndian.AppendUint64(dst, uint64(n)), err
	case pgwire.OIDFloat4:
		f, _ := v.(float32)
		return binary.BigEndian.AppendUint32(dst, math.Float32bits(f)), nil
	case pgwire.OIDFloat8:
		f, _ := v.(float64)
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(f)), nil
	case pgwire.OIDNumeric:
		return appendNumericBinary(dst, v)
	case pgwire.OIDDate:
		tm, _ := v.(time.Time)
		if inf, neg := isInfinite(tm); inf {
			return binary.BigEndian.AppendUint32(dst, uint32(infinity32(neg))), nil
		}
		days := tm.Unix()/86400 - pgEpochUnixDays
		if tm.Unix()%86400 < 0 {
			days--
		}
		return binary.BigEndian.AppendUint32(dst, uint32(int32(days))), nil
	case pgwire.OIDTimestamp, pgwire.OIDTimestamptz:
		tm, _ := v.(time.Time)
		if inf, neg := isInfinite(tm); inf {
			if neg {
				return binary.BigEndian.AppendUint64(dst, 1<<63), nil
			}
			return binary.BigEndian.AppendUint64(dst, math.MaxInt64), nil
		}
		us := tm.UnixMicro() - pgEpoch.UnixMicro()
		return binary.BigEndian.AppendUint64(dst, uint64(us)), nil
	case pgwire.OIDTime:
		tm, _ := v.(time.Time)
		h, m, s := tm.Clock()
		us := int64(h*3600+m*60+s)*1e6 + int64(tm.Nanosecond()/1000)
		return binary.BigEndian.AppendUint64(dst, uint64(us)), nil
	case pgwire.OIDTimetz:
		tm, _ := v.(time.Time)
		h, m, s := tm.Clock()
		_, off := tm.Zone()
		us := int64(h*3600+m*60+s)*1e6 + int64(tm.Nanosecond()/1000)
		dst = binary.BigEndian.AppendUint64(dst, uint64(us))
		return binary.BigEndian.AppendUint32(dst, uint32(int32(-off))), nil // seconds west of UTC
	case pgwire.OIDInterval:
		iv, _ := v.(duckdb.Interval)
		dst = binary.BigEndian.AppendUint64(dst, uint64(iv.Micros))
		dst = binary.BigEndian.AppendUint32(dst, uint32(iv.Days))
		return binary.BigEndian.AppendUint32(dst, uint32(iv.Months)), nil
	case pgwire.OIDUUID:
		b, _ := v.([]byte)
		return append(dst, b...), nil
	case pgwire.OIDBytea:
		b, _ := v.([]byte)
		return append(dst, b...), nil
	}
	if t.elem != nil {
		list, ok := v.([]any)
		if !ok {
			return dst, fmt.Errorf("array column holds %T", v)
		}
		return appendArrayBinary(dst, list, t.elem, loc)
	}
	// text, json, enum and the rest: the text form is the binary form.
	return appendText(dst, v, t, loc), nil
}

func infinity32(neg bool) int32 {
	if neg {
		return math.MinInt32
	}
	return math.MaxInt32
}

func toInt64(v any) (int64, error) {
	switch v := v.(type) {
	case int32:
		return int64(v), nil
	case int64:
		return v, nil
	case int16:
		return int64(v), nil
	case int8:
		return int64(v), nil
	case uint8:
		return int64(v), nil
	case uint16:
		return int64(v), nil
	case uint32:
		return int64(v), nil
	}
	return 0, fmt.Errorf("integer column holds %T", v)
}

// appendNumericBinary encodes a decimal as numeric_send does: base-10000
// digits, weight, sign and display scale.
func appendNumericBinary(dst []byte, v any) ([]byte, error) {
	var digits []byte
	var tmp [48]byte
	scale := 0
	neg := false
	switch v := v.(type) {
	case duckdb.Decimal:
		neg = v.Value.Sign() < 0
		scale = int(v.Scale)
		if v.Value.IsInt64() {
			n := v.Value.Int64()
			if neg {
				digits = strconv.AppendUint(tmp[:0], uint64(-n), 10)
			} else {
				digits = strconv.AppendInt(tmp[:0], n, 10)
			}
		} else {
			digits = new(big.Int).Abs(v.Value).Append(tmp[:0], 10)
		}
	case *big.Int:
		neg = v.Sign() < 0
		digits = new(big.Int).Abs(v).Append(nil, 10)
	case uint64:
		digits = strconv.AppendUint(nil, v, 10)
	default:
		n, err := toInt64(v)
		if err != nil {
			return dst, err
		}
		neg = n < 0
		if neg {
			digits = strconv.AppendUint(nil, uint64(-n), 10)
		} else {
			digits = strconv.AppendInt(nil, n, 10)
		}
	}
	return appendNumericDigits(dst, digits, scale, neg), nil
}

// appendNumericDigits encodes the unsigned decimal digits with scale
// digits after the point.
func appendNumericDigits(dst, digits []byte, scale int, neg bool) []byte {
	var intPart, frac []byte
	if len(digits) > scale {
		intPart, frac = digits[:len(digits)-scale], digits[len(digits)-scale:]
	} else {
		frac = make([]byte, scale-len(digits), scale)
		for i := range frac {
			frac[i] = '0'
		}
		frac = append(frac, digits...)
	}
	// Left-pad the integer part and right-pad the fraction to whole groups.
	pad := (4 - len(intPart)%4) % 4
	var gbuf [32]int16
	groups := gbuf[:0]
	acc, n := 0, pad
	for _, c := range intPart {
		acc = acc*10 + int(c-'0')
		if n++; n == 4 {
			groups = append(groups, int16(acc))
			acc, n = 0, 0
		}
	}
	weight := len(groups) - 1
	for i := 0; i < len(frac); i += 4 {
		g := 0
		for j := 0; j < 4; j++ {
			g *= 10
			if i+j < len(frac) {
				g += int(frac[i+j] - '0')
			}
		}
		groups = append(groups, int16(g))
	}
	for len(groups) > 0 && groups[0] == 0 {
		groups = groups[1:]
		weight--
	}
	for len(groups) > 0 && groups[len(groups)-1] == 0 {
		groups = groups[:len(groups)-1]
	}
	sign := uint16(0)
	if neg && len(groups) > 0 {
		sign = 0x4000
	}
	if len(groups) == 0 {
		weight = 0
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(groups)))
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(weight)))
	dst = binary.BigEndian.AppendUint16(dst, sign)
	dst = binary.BigEndian.AppendUint16(dst, uint16(scale))
	for _, g := range groups {
		dst = binary.BigEndian.AppendUint16(dst, uint16(g))
	}
	return dst
}

// appendArrayBinary encodes a one-dimensional array (array_send).
func appendArrayBinary(dst []byte, list []any, elem *pgType, loc *time.Location) ([]byte, error) {
	hasNull := uint32(0)
	for _, v := range list {
		if v == nil {
			hasNull = 1
		}
	}
	if len(list) == 0 {
		dst = binary.BigEndian.AppendUint32(dst, 0)
		dst = binary.BigEndian.AppendUint32(dst, 0)
		return binary.BigEndian.AppendUint32(dst, elem.oid), nil
	}
	dst = binary.BigEndian.AppendUint32(dst, 1)
	dst = binary.BigEndian.AppendUint32(dst, hasNull)
	dst = binary.BigEndian.AppendUint32(dst, elem.oid)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(list)))
	dst = binary.BigEndian.AppendUint32(dst, 1)
	for _, v := range list {
		if v == nil {
			dst = binary.BigEndian.AppendUint32(dst, math.MaxUint32)
			continue
		}
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		var err error
		if dst, err = appendBinary(dst, v, elem, loc); err != nil {
			return dst, err
		}
		binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	}
	return dst, nil
}
