// Parameter coercion: Bind values converted to the exact type DuckDB inferred, so it never re-plans with other types.

package duckwire

import (
	"database/sql/driver"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// reNumber is an unambiguous number: no leading zeros, no exponent.
var reNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?$`)

// coerce converts a decoded parameter to the Go type of DuckDB's parameter
// type t. DuckDB re-plans a prepared statement bound with a value of
// another type, which can change the result types already described to
// the client (coalesce($1, 5) would turn int4 into int8). A parameter
// DuckDB could not type gets a number when its text is unambiguously one
// (PostgreSQL would have inferred a numeric type from the context).
func coerce(v driver.Value, t duckdb.Type) (driver.Value, error) {
	if v == nil {
		return nil, nil
	}
	switch t {
	case duckdb.TYPE_TINYINT:
		return toInt(v, math.MinInt8, math.MaxInt8, func(n int64) driver.Value { return int8(n) })
	case duckdb.TYPE_SMALLINT:
		return toInt(v, math.MinInt16, math.MaxInt16, func(n int64) driver.Value { return int16(n) })
	case duckdb.TYPE_INTEGER:
		return toInt(v, math.MinInt32, math.MaxInt32, func(n int64) driver.Value { return int32(n) })
	case duckdb.TYPE_BIGINT:
		return toInt(v, math.MinInt64, math.MaxInt64, func(n int64) driver.Value { return n })
	case duckdb.TYPE_UTINYINT:
		return toInt(v, 0, math.MaxUint8, func(n int64) driver.Value { return uint8(n) })
	case duckdb.TYPE_USMALLINT:
		return toInt(v, 0, math.MaxUint16, func(n int64) driver.Value { return uint16(n) })
	case duckdb.TYPE_UINTEGER:
		return toInt(v, 0, math.MaxUint32, func(n int64) driver.Value { return uint32(n) })
	case duckdb.TYPE_DOUBLE, duckdb.TYPE_FLOAT:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case int64:
			f = float64(x)
		case string:
			var err error
			if f, err = strconv.ParseFloat(strings.TrimSpace(x), 64); err != nil {
				return nil, errorf(codeInvalidText, fmt.Sprintf("invalid input syntax for type double precision: %q", x))
			}
		default:
			return v, nil
		}
		if t == duckdb.TYPE_FLOAT {
			return float32(f), nil
		}
		return f, nil
	case duckdb.TYPE_VARCHAR:
		switch x := v.(type) {
		case int64:
			return strconv.FormatInt(x, 10), nil
		case float64:
			return string(appendFloat(nil, x, 64)), nil
		case bool:
			return map[bool]string{true: "true", false: "false"}[x], nil
		}
	case duckdb.TYPE_BOOLEAN:
		if s, ok := v.(string); ok {
			return decodeParam(16, 0, []byte(s))
		}
	case duckdb.TYPE_INVALID, duckdb.TYPE_ANY:
		if s, ok := v.(string); ok && reNumber.MatchString(s) {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n, nil
			}
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				return f, nil
			}
		}
	}
	return v, nil
}

func toInt(v driver.Value, lo, hi int64, conv func(int64) driver.Value) (driver.Value, error) {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case float64:
		if x != math.Trunc(x) || x < math.MinInt64 || x >= math.MaxInt64 {
			return nil, errorf(codeInvalidText, fmt.Sprintf("invalid input syntax for type integer: %q", strconv.FormatFloat(x, 'g', -1, 64)))
		}
		n = int64(x)
	case string:
		var err error
		if n, err = strconv.ParseInt(strings.TrimSpace(x), 10, 64); err != nil {
			return nil, errorf(codeInvalidText, fmt.Sprintf("invalid input syntax for type integer: %q", x))
		}
	default:
		return v, nil
	}
	if n < lo || n > hi {
		return nil, errorf(codeOutOfRange, "value out of range for the parameter's type")
	}
	return conv(n), nil
}
