// Numeric: PostgreSQL's base-10000 binary numeric to a scaled integer.

package copybin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
)

const (
	numericPos  = 0x0000
	numericNeg  = 0x4000
	numericNaN  = 0xC000
	numericPInf = 0xD000
	numericNInf = 0xF000
)

// pow10 holds 10^0..10^38 as 128-bit unsigned integers (hi, lo).
var pow10 [39][2]uint64

func init() {
	pow10[0] = [2]uint64{0, 1}
	for i := 1; i < len(pow10); i++ {
		hi, lo := pow10[i-1][0], pow10[i-1][1]
		h, l := bits.Mul64(lo, 10)
		pow10[i] = [2]uint64{hi*10 + h, l}
	}
}

var errNumericOverflow = errors.New("numeric value does not fit the column's precision")

// parseNumeric turns a binary numeric into its value times 10^scale as a
// signed 128-bit integer (hi, lo), refusing NaN, infinities, digits below
// the scale and values of more than width digits.
func parseNumeric(b []byte, width, scale int) (hi int64, lo uint64, err error) {
	if len(b) < 8 {
		return 0, 0, fmt.Errorf("numeric: %d bytes, want at least 8", len(b))
	}
	ndigits := int(binary.BigEndian.Uint16(b))
	weight := int(int16(binary.BigEndian.Uint16(b[2:])))
	sign := binary.BigEndian.Uint16(b[4:])
	if len(b) != 8+2*ndigits {
		return 0, 0, fmt.Errorf("numeric: %d bytes for %d digits", len(b), ndigits)
	}
	switch sign {
	case numericPos, numericNeg:
	case numericNaN:
		return 0, 0, errors.New("numeric NaN has no DuckDB DECIMAL value")
	case numericPInf:
		return 0, 0, errors.New("numeric Infinity has no DuckDB DECIMAL value")
	case numericNInf:
		return 0, 0, errors.New("numeric -Infinity has no DuckDB DECIMAL value")
	default:
		return 0, 0, fmt.Errorf("numeric: bad sign word %#x", sign)
	}
	digits := b[8:]
	full, part := scale/4, scale%4
	// Fast path: at most four whole groups and no digit past the scale, so
	// the scaled value fits 19 decimal digits in a uint64.
	groups := weight + full + 1
	if groups >= 0 && groups <= 4 && (ndigits <= groups || (part > 0 && ndigits == groups+1)) {
		var acc uint64
		ok := true
		for k := range groups {
			var d uint64
			if k < ndigits {
				d = uint64(binary.BigEndian.Uint16(digits[2*k:]))
			}
			ok = ok && d <= 9999
			acc = acc*10000 + d
		}
		if part > 0 {
			var d uint64
			if groups < ndigits {
				d = uint64(binary.BigEndian.Uint16(digits[2*groups:]))
			}
			div := pow10[4-part][1]
			ok = ok && d <= 9999 && d%div == 0
			acc = acc*pow10[part][1] + d/div
		}
		if ok && (width >= 19 || acc < pow10[width][1]) {
			if sign == numericNeg && acc != 0 {
				return -1, -acc, nil
			}
			return 0, acc, nil
		}
	}
	digit := func(pos int) uint64 {
		if k := weight - pos; k >= 0 && k < ndigits {
			return uint64(binary.BigEndian.Uint16(digits[2*k:]))
		}
		return 0
	}
	// Whole base-10000 groups down to 10^-4*full, then a partial group for
	// the last scale%4 decimal places.
	var uhi, ulo uint64
	for pos := weight; pos >= -full; pos-- {
		d := digit(pos)
		if d > 9999 {
			return 0, 0, fmt.Errorf("numeric: digit %d out of range", d)
		}
		if uhi == 0 && ulo <= (math.MaxUint64-9999)/10000 {
			ulo = ulo*10000 + d
			continue
		}
		var ok bool
		if uhi, ulo, ok = mulAdd128(uhi, ulo, 10000, d); !ok {
			return 0, 0, errNumericOverflow
		}
	}
	kept := -full // lowest position consumed
	if part > 0 {
		d, div := digit(-full-1), pow10[4-part][1]
		if d > 9999 {
			return 0, 0, fmt.Errorf("numeric: digit %d out of range", d)
		}
		if d%div != 0 {
			return 0, 0, fmt.Errorf("numeric has more than %d decimal places", scale)
		}
		var ok bool
		if uhi, ulo, ok = mulAdd128(uhi, ulo, pow10[part][1], d/div); !ok {
			return 0, 0, errNumericOverflow
		}
		kept--
	}
	// Digits below the kept positions must be zero, or the value would be cut.
	for k := max(0, weight-kept+1); k < ndigits; k++ {
		if binary.BigEndian.Uint16(digits[2*k:]) != 0 {
			return 0, 0, fmt.Errorf("numeric has more than %d decimal places", scale)
		}
	}
	if lim := pow10[width]; uhi > lim[0] || (uhi == lim[0] && ulo >= lim[1]) {
		return 0, 0, errNumericOverflow
	}
	if sign == numericNeg {
		ulo = ^ulo + 1
		uhi = ^uhi
		if ulo == 0 {
			uhi++
		}
	}
	return int64(uhi), ulo, nil
}

// mulAdd128 returns (hi, lo)*m + a, and false on overflow of 127 bits.
func mulAdd128(hi, lo, m, a uint64) (uint64, uint64, bool) {
	h1, l1 := bits.Mul64(lo, m)
	h2, l2 := bits.Mul64(hi, m)
	if h2 != 0 {
		return 0, 0, false
	}
	nh, c := bits.Add64(l2, h1, 0)
	if c != 0 {
		return 0, 0, false
	}
	nl, c := bits.Add64(l1, a, 0)
	nh, c2 := bits.Add64(nh, 0, c)
	if c2 != 0 || nh>>63 != 0 {
		return 0, 0, false
	}
	return nh, nl, true
}
