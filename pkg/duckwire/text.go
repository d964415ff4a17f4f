// Text format: values printed exactly as PostgreSQL prints them, appended to a buffer.

package duckwire

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/qpkit/qpkit/pkg/pgwire"
)

// appendText appends v (a non-nil value from the DuckDB driver) as t in
// PostgreSQL's text format; loc is the session's TimeZone.
func appendText(dst []byte, v any, t *pgType, loc *time.Location) []byte {
	if t.oid == pgwire.OIDJSON {
		return appendJSON(dst, v)
	}
	switch v := v.(type) {
	case string:
		return append(dst, v...)
	case int32:
		return strconv.AppendInt(dst, int64(v), 10)
	case int64:
		return strconv.AppendInt(dst, v, 10)
	case int16:
		return strconv.AppendInt(dst, int64(v), 10)
	case int8:
		return strconv.AppendInt(dst, int64(v), 10)
	case uint8:
		return strconv.AppendUint(dst, uint64(v), 10)
	case uint16:
		return strconv.AppendUint(dst, uint64(v), 10)
	case uint32:
		return strconv.AppendUint(dst, uint64(v), 10)
	case uint64:
		return strconv.AppendUint(dst, v, 10)
	case float64:
		return appendFloat(dst, v, 64)
	case float32:
		return appendFloat(dst, float64(v), 32)
	case bool:
		if v {
			return append(dst, 't')
		}
		return append(dst, 'f')
	case duckdb.Decimal:
		return appendDecimal(dst, v.Value, int(v.Scale))
	case *big.Int:
		return v.Append(dst, 10)
	case time.Time:
		switch t.oid {
		case pgwire.OIDDate:
			return appendDate(dst, v)
		case pgwire.OIDTime:
			return appendClock(dst, v)
		case pgwire.OIDTimetz:
			_, off := v.Zone()
			return appendOffset(appendClock(dst, v), off)
		case pgwire.OIDTimestamptz:
			return appendTimestamp(dst, v.In(loc), true)
		}
		return appendTimestamp(dst, v, false)
	case []byte:
		switch t.oid {
		case pgwire.OIDUUID:
			return appendUUID(dst, v)
		case pgwire.OIDBytea:
			dst = append(dst, '\\', 'x')
			return hex.AppendEncode(dst, v)
		}
		return append(dst, v...)
	case duckdb.Interval:
		return appendInterval(dst, v)
	case []any:
		elem := t.elem
		if elem == nil {
			elem = tText
		}
		return appendArray(dst, v, elem, loc)
	}
	return fmt.Append(dst, v)
}

// appendFloat prints like PostgreSQL 12+ with extra_float_digits > 0: the
// shortest digits that read back exactly, in exponent form when the
// decimal exponent is below -4 or at least 15 (float8) or 6 (float4).
func appendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	lo, hi := 1e-4, 1e15
	if bits == 32 {
		lo, hi = float64(float32(1e-4)), 1e6
	}
	if a := math.Abs(f); a == 0 || (a >= lo && a < hi) {
		return strconv.AppendFloat(dst, f, 'f', -1, bits)
	}
	return strconv.AppendFloat(dst, f, 'e', -1, bits)
}

// appendDecimal prints unscaled/10^scale keeping every digit of the scale,
// as numeric does ("1.50").
func appendDecimal(dst []byte, unscaled *big.Int, scale int) []byte {
	var digits []byte
	var tmp [40]byte
	neg := unscaled.Sign() < 0
	if unscaled.IsInt64() {
		n := unscaled.Int64()
		if neg {
			digits = strconv.AppendUint(tmp[:0], uint64(-n), 10)
		} else {
			digits = strconv.AppendInt(tmp[:0], n, 10)
		}
	} else {
		digits = new(big.Int).Abs(unscaled).Append(tmp[:0], 10)
	}
	if neg {
		dst = append(dst, '-')
	}
	return appendScaled(dst, digits, scale)
}

// appendScaled appends the decimal digits with a point scale digits from
// the right, zero-padded.
func appendScaled(dst, digits []byte, scale int) []byte {
	if scale <= 0 {
		return append(dst, digits...)
	}
	if len(digits) <= scale {
		dst = append(dst, '0', '.')
		for i := len(digits); i < scale; i++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[:len(digits)-scale]...)
	dst = append(dst, '.')
	return append(dst, digits[len(digits)-scale:]...)
}

// DuckDB's infinite dates and timestamps arrive as extreme years.
func isInfinite(t time.Time) (inf bool, neg bool) {
	y := t.Year()
	return y > 200000 || y < -200000, y < 0
}

func appendYMD(dst []byte, t time.Time) ([]byte, bool) {
	y, m, d := t.Date()
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	dst = appendPad(dst, y, 4)
	dst = append(dst, '-')
	dst = appendPad(dst, int(m), 2)
	dst = append(dst, '-')
	return appendPad(dst, d, 2), bc
}

func appendDate(dst []byte, t time.Time) []byte {
	if inf, neg := isInfinite(t); inf {
		return appendInfinity(dst, neg)
	}
	dst, bc := appendYMD(dst, t)
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

func appendInfinity(dst []byte, neg bool) []byte {
	if neg {
		return append(dst, "-infinity"...)
	}
	return append(dst, "infinity"...)
}

// appendClock appends HH:MM:SS and the microseconds without trailing zeros.
func appendClock(dst []byte, t time.Time) []byte {
	h, m, s := t.Clock()
	return appendHMS(dst, h, m, s, t.Nanosecond()/1000)
}

func appendHMS(dst []byte, h, m, s, us int) []byte {
	dst = appendPad(dst, h, 2)
	dst = append(dst, ':')
	dst = appendPad(dst, m, 2)
	dst = append(dst, ':')
	dst = appendPad(dst, s, 2)
	if us > 0 {
		dst = append(dst, '.')
		w := 6
		for us%10 == 0 {
			us /= 10
			w--
		}
		dst = appendPad(dst, us, w)
	}
	return dst
}

func appendTimestamp(dst []byte, t time.Time, tz bool) []byte {
	if inf, neg := isInfinite(t); inf {
		return appendInfinity(dst, neg)
	}
	dst, bc := appendYMD(dst, t)
	dst = append(dst, ' ')
	dst = appendClock(dst, t)
	if tz {
		_, off := t.Zone()
		dst = appendOffset(dst, off)
	}
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendOffset appends a UTC offset as PostgreSQL does: +HH, +HH:MM or +HH:MM:SS.
func appendOffset(dst []byte, off int) []byte {
	if off < 0 {
		dst = append(dst, '-')
		off = -off
	} else {
		dst = append(dst, '+')
	}
	dst = appendPad(dst, off/3600, 2)
	if m, s := off%3600/60, off%60; m != 0 || s != 0 {
		dst = append(dst, ':')
		dst = appendPad(dst, m, 2)
		if s != 0 {
			dst = append(dst, ':')
			dst = appendPad(dst, s, 2)
		}
	}
	return dst
}

// appendInterval prints in IntervalStyle postgres: "1 year 2 mons 3 days
// 04:05:06.5", a "+" before a positive field that follows a negative one.
func appendInterval(dst []byte, iv duckdb.Interval) []byte {
	start := len(dst)
	years, mons := iv.Months/12, iv.Months%12
	neg := false
	field := func(n int64, unit string) {
		if n == 0 {
			return
		}
		if len(dst) > start {
			dst = append(dst, ' ')
		}
		if neg && n > 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, n, 10)
		dst = append(dst, ' ')
		dst = append(dst, unit...)
		if n != 1 {
			if unit == "mon" || unit == "day" || unit == "year" {
				dst = append(dst, 's')
			}
		}
		neg = n < 0
	}
	field(int64(years), "year")
	field(int64(mons), "mon")
	field(int64(iv.Days), "day")
	if iv.Micros != 0 || len(dst) == start {
		if len(dst) > start {
			dst = append(dst, ' ')
		}
		us := iv.Micros
		if us < 0 {
			dst = append(dst, '-')
			us = -us
		} else if neg {
			dst = append(dst, '+')
		}
		secs := us / 1e6
		h := secs / 3600
		dst = appendPad64(dst, h, 2)
		dst = append(dst, ':')
		dst = appendPad(dst, int(secs%3600/60), 2)
		dst = append(dst, ':')
		dst = appendPad(dst, int(secs%60), 2)
		if f := int(us % 1e6); f > 0 {
			dst = append(dst, '.')
			w := 6
			for f%10 == 0 {
				f /= 10
				w--
			}
			dst = appendPad(dst, f, w)
		}
	}
	return dst
}

func appendUUID(dst, u []byte) []byte {
	if len(u) != 16 {
		return hex.AppendEncode(dst, u)
	}
	dst = hex.AppendEncode(dst, u[0:4])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, u[4:6])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, u[6:8])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, u[8:10])
	dst = append(dst, '-')
	return hex.AppendEncode(dst, u[10:16])
}

// appendJSON appends JSON text, or re-serializes a value the driver
// decoded from JSON (inside lists).
func appendJSON(dst []byte, v any) []byte {
	switch s := v.(type) {
	case []byte:
		return append(dst, s...)
	case string: // the text itself: prepareDuck casts JSON columns to VARCHAR
		return append(dst, s...)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Append(dst, v)
	}
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte{'\n'})...)
}

// appendArray prints a list as a PostgreSQL array literal, quoting
// elements that need it.
func appendArray(dst []byte, list []any, elem *pgType, loc *time.Location) []byte {
	dst = append(dst, '{')
	for i, v := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		if v == nil {
			dst = append(dst, "NULL"...)
			continue
		}
		if _, nested := v.([]any); nested {
			dst = appendText(dst, v, &pgType{oid: pgwire.OIDText, elem: elem.elem}, loc)
			continue
		}
		at := len(dst)
		dst = appendText(dst, v, elem, loc)
		if needsQuote(dst[at:]) {
			raw := append([]byte(nil), dst[at:]...)
			dst = append(dst[:at], '"')
			for _, c := range raw {
				if c == '"' || c == '\\' {
					dst = append(dst, '\\')
				}
				dst = append(dst, c)
			}
			dst = append(dst, '"')
		}
	}
	return append(dst, '}')
}

func needsQuote(s []byte) bool {
	if len(s) == 0 || (len(s) == 4 && bytes.EqualFold(s, []byte("null"))) {
		return true
	}
	for _, c := range s {
		switch c {
		case '{', '}', ',', '"', '\\', ' ', '\t', '\n', '\r', '\v', '\f':
			return true
		}
	}
	return false
}

// appendPad appends n zero-padded to width digits; the 2- and 4-digit
// cases of dates and clocks skip strconv.
func appendPad(dst []byte, n, width int) []byte {
	switch {
	case width == 2 && n >= 0 && n < 100:
		return append(dst, byte('0'+n/10), byte('0'+n%10))
	case width == 4 && n >= 0 && n < 10000:
		return append(dst, byte('0'+n/1000), byte('0'+n/100%10), byte('0'+n/10%10), byte('0'+n%10))
	}
	return appendPad64(dst, int64(n), width)
}

func appendPad64(dst []byte, n int64, width int) []byte {
	var tmp [20]byte
	b := strconv.AppendInt(tmp[:0], n, 10)
	for i := len(b); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, b...)
}
