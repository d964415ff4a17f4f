// Interval literals: PostgreSQL's forms read here, written as one form
// DuckDB reads the same way.

package duckdialect

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// PostgreSQL's interval field bits (INTERVAL_MASK in datetime.h) as the
// parser stores them in the first type modifier.
const (
	maskMonth     = 1 << 1
	maskYear      = 1 << 2
	maskDay       = 1 << 3
	maskHour      = 1 << 10
	maskMinute    = 1 << 11
	maskSecond    = 1 << 12
	maskFullRange = 0x7FFF
)

// interval is PostgreSQL's (and DuckDB's) representation: months, days
// and microseconds, kept apart because they do not convert exactly.
// overflow records that a product or sum left int64 (PostgreSQL's months
// and days are int32, checked at the end).
type interval struct {
	months, days, micros int64
	overflow             bool
}

// mul returns a*b, noting an int64 overflow in iv.
func (iv *interval) mul(a, b int64) int64 {
	c := a * b
	if a != 0 && (c/a != b || (a == -1 && b == math.MinInt64)) {
		iv.overflow = true
	}
	return c
}

// add returns a+b, noting an int64 overflow in iv.
func (iv *interval) add(a, b int64) int64 {
	c := a + b
	if (c > a) != (b > 0) {
		iv.overflow = true
	}
	return c
}

const (
	usPerSecond = 1_000_000
	usPerMinute = 60 * usPerSecond
	usPerHour   = 60 * usPerMinute
)

// intervalLiteral reads interval 'text' [fields] (and 'text'::interval)
// and writes it as an explicit months/days/microseconds string, so that
// DuckDB neither needs PostgreSQL's field syntax (interval '90' day) nor
// reads the text its own way.
func intervalLiteral(s string, mods []int64) (*pg_query.Node, error) {
	mask := int64(maskFullRange)
	if len(mods) > 0 {
		mask = mods[0]
	}
	if len(mods) > 1 {
		return nil, unsupported("interval precision")
	}
	iv, err := parseInterval(strings.ToLower(strings.TrimSpace(s)), mask)
	if err != nil {
		return nil, err
	}
	if iv.overflow || iv.months != int64(int32(iv.months)) || iv.days != int64(int32(iv.days)) {
		// PostgreSQL: "interval field value out of range"; the sums
		// here would wrap around.
		return nil, unsupported("interval literal '%s' out of range (interval field value out of range)", s)
	}
	text := fmt.Sprintf("%d months %d days %d microseconds", iv.months, iv.days, iv.micros)
	return cast(strConst(text), "interval"), nil
}

// parseInterval reads the subset of PostgreSQL's interval input that is
// unambiguous: a bare number with one field ('90' day; seconds without a
// field), 'Y-M' year to month, and "N unit" lists with optional hh:mm[:ss].
func parseInterval(s string, mask int64) (interval, error) {
	bad := func() (interval, error) { return interval{}, unsupported("interval literal '%s' in this form", s) }
	var iv interval
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		switch mask {
		case maskYear:
			iv.months = iv.mul(12, v)
		case maskMonth:
			iv.months = v
		case maskDay:
			iv.days = v
		case maskHour:
			iv.micros = iv.mul(v, usPerHour)
		case maskMinute:
			iv.micros = iv.mul(v, usPerMinute)
		case maskSecond, maskFullRange:
			iv.micros = iv.mul(v, usPerSecond)
		default:
			return bad()
		}
		return iv, nil
	}
	if mask == maskYear|maskMonth {
		y, m, ok := strings.Cut(s, "-")
		yv, err1 := strconv.ParseInt(y, 10, 64)
		mv, err2 := strconv.ParseInt(m, 10, 64)
		if !ok || err1 != nil || err2 != nil || y == "" || mv < 0 || mv > 11 {
			return bad()
		}
		sign := int64(1)
		if strings.HasPrefix(y, "-") {
			sign = -1
		}
		iv.months = iv.add(iv.mul(12, yv), sign*mv)
		return iv, nil
	}
	if mask != maskFullRange {
		return bad()
	}
	f := strings.Fields(strings.TrimPrefix(s, "@"))
	if len(f) == 0 {
		return bad()
	}
	// A unit given twice ('1 year 1 year') is an error in PostgreSQL.
	seen := map[string]bool{}
	for i := 0; i < len(f); i++ {
		if strings.Contains(f[i], ":") {
			us, ok := clockMicros(&iv, f[i])
			if !ok || seen[":"] {
				return bad()
			}
			seen[":"] = true
			iv.micros = iv.add(iv.micros, us)
			continue
		}
		if i+1 >= len(f) {
			return bad()
		}
		num, unit := f[i], canonicalUnit(strings.TrimSuffix(f[i+1], ","))
		i++
		if seen[unit] || !addUnit(&iv, num, unit) {
			return bad()
		}
		seen[unit] = true
	}
	return iv, nil
}

// canonicalUnit maps a unit's abbreviations and plurals to one name.
func canonicalUnit(unit string) string {
	switch unit {
	case "ms":
		unit = "msec"
	case "us":
		unit = "usec"
	case "s":
		unit = "sec"
	case "m":
		unit = "min"
	default:
		unit = strings.TrimSuffix(unit, "s")
	}
	switch unit {
	case "yr", "y":
		unit = "year"
	case "mon":
		unit = "month"
	case "w":
		unit = "week"
	case "d":
		unit = "day"
	case "hr", "h":
		unit = "hour"
	case "min":
		unit = "minute"
	case "sec":
		unit = "second"
	case "msec":
		unit = "millisecond"
	case "usec":
		unit = "microsecond"
	}
	return unit
}

// addUnit adds "num unit" (unit canonical): whole numbers for calendar
// units, decimals for seconds and smaller.
func addUnit(iv *interval, num, unit string) bool {
	if unit == "second" || unit == "sec" || unit == "millisecond" || unit == "msec" || unit == "microsecond" || unit == "usec" {
		p, sc, ok := decimalDigits(num)
		if !ok || p > 18 || sc > 6 {
			return false
		}
		neg := strings.HasPrefix(num, "-")
		intPart, frac, _ := strings.Cut(strings.TrimLeft(num, "+-"), ".")
		whole, _ := strconv.ParseInt("0"+intPart, 10, 64)
		fr, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
		us := iv.add(iv.mul(whole, usPerSecond), fr) // in millionths of the unit
		switch unit {
		case "millisecond", "msec":
			if us%1000 != 0 {
				return false
			}
			us /= 1000
		case "microsecond", "usec":
			if us%usPerSecond != 0 {
				return false
			}
			us /= usPerSecond
		}
		if neg {
			us = -us
		}
		iv.micros = iv.add(iv.micros, us)
		return true
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return false
	}
	switch unit {
	case "year", "yr", "y":
		iv.months = iv.add(iv.months, iv.mul(12, v))
	case "mon", "month":
		iv.months = iv.add(iv.months, v)
	case "week", "w":
		iv.days = iv.add(iv.days, iv.mul(7, v))
	case "day", "d":
		iv.days = iv.add(iv.days, v)
	case "hour", "hr", "h":
		iv.micros = iv.add(iv.micros, iv.mul(v, usPerHour))
	case "minute", "min":
		iv.micros = iv.add(iv.micros, iv.mul(v, usPerMinute))
	default:
		return false
	}
	return true
}

// clockMicros reads [-]hh:mm[:ss[.ffffff]], noting an overflow in iv.
func clockMicros(iv *interval, s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	parts := strings.Split(strings.TrimLeft(s, "+-"), ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	h, err1 := strconv.ParseInt(parts[0], 10, 64)
	m, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || m > 59 {
		return 0, false
	}
	us := iv.add(iv.mul(h, usPerHour), m*usPerMinute)
	if len(parts) == 3 {
		var sec interval
		if !addUnit(&sec, parts[2], "second") || sec.micros >= 60*usPerSecond {
			return 0, false
		}
		us = iv.add(us, sec.micros)
	}
	if neg {
		us = -us
	}
	return us, true
}
