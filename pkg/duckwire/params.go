// Parameters: Bind values in text or binary format turned into DuckDB driver values.

package duckwire

import (
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/qpkit/qpkit/pkg/pgwire"
)

// decodeParam turns one Bind parameter of type oid into a value DuckDB
// binds. Text values stay strings unless the type is numeric-like, so
// DuckDB casts them to the parameter's type as it would a literal.
func decodeParam(oid uint32, format int16, b []byte) (driver.Value, error) {
	if b == nil {
		return nil, nil
	}
	if format == 0 {
		s := string(b)
		switch oid {
		case pgwire.OIDInt2, pgwire.OIDInt4, pgwire.OIDInt8:
			return parseIntParam(oid, s)
		case pgwire.OIDFloat4, pgwire.OIDFloat8:
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				return nil, errorf(codeInvalidText, fmt.Sprintf("invalid input syntax for type double precision: %q", s))
			}
			return f, nil
		case pgwire.OIDBool:
			if b, ok := pgwire.ParseBool(s); ok {
				return b, nil
			}
			return nil, errorf(codeInvalidText, fmt.Sprintf("invalid input syntax for type boolean: %q", s))
		case pgwire.OIDBytea:
			return decodeByteaText(s)
		}
		return s, nil
	}
	if format != 1 {
		return nil, errorf(codeProtocol, fmt.Sprintf("unsupported format code: %d", format))
	}
	bad := func() (driver.Value, error) {
		return nil, errorf(codeProtocol, fmt.Sprintf("incorrect binary data format in bind parameter of type %d", oid))
	}
	switch oid {
	case pgwire.OIDBool:
		if len(b) != 1 {
			return bad()
		}
		return b[0] != 0, nil
	case pgwire.OIDInt2:
		if len(b) != 2 {
			return bad()
		}
		return int64(int16(binary.BigEndian.Uint16(b))), nil
	case pgwire.OIDInt4:
		if len(b) != 4 {
			return bad()
		}
		return int64(int32(binary.BigEndian.Uint32(b))), nil
	case pgwire.OIDInt8:
		if len(b) != 8 {
			return bad()
		}
		return int64(binary.BigEndian.Uint64(b)), nil
	case pgwire.OIDFloat4:
		if len(b) != 4 {
			return bad()
		}
		return float64(math.Float32frombits(binary.BigEndian.Uint32(b))), nil
	case pgwire.OIDFloat8:
		if len(b) != 8 {
			return bad()
		}
		return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
	case pgwire.OIDBytea:
		return append([]byte(nil), b...), nil
	case pgwire.OIDUUID:
		if len(b) != 16 {
			return bad()
		}
		return string(appendUUID(nil, b)), nil
	case pgwire.OIDDate:
		if len(b) != 4 {
			return bad()
		}
		days := int64(int32(binary.BigEndian.Uint32(b)))
		switch days {
		case math.MaxInt32:
			return "infinity", nil
		case math.MinInt32:
			return "-infinity", nil
		}
		return time.Unix((days+pgEpochUnixDays)*86400, 0).UTC(), nil
	case pgwire.OIDTimestamp, pgwire.OIDTimestamptz:
		if len(b) != 8 {
			return bad()
		}
		us := int64(binary.BigEndian.Uint64(b))
		switch us {
		case math.MaxInt64:
			return "infinity", nil
		case math.MinInt64:
			return "-infinity", nil
		}
		t := time.UnixMicro(pgEpoch.UnixMicro() + us).UTC()
		if oid == pgwire.OIDTimestamp {
			// A timestamp without zone as text: bound as a time.Time it
			// would be an instant, moved by the session's TimeZone when
			// cast to date or text.
			return timestampText(t), nil
		}
		return t, nil
	case pgwire.OIDInterval:
		if len(b) != 16 {
			return bad()
		}
		return duckdb.Interval{Micros: int64(binary.BigEndian.Uint64(b)),
			Days: int32(binary.BigEndian.Uint32(b[8:])), Months: int32(binary.BigEndian.Uint32(b[12:]))}, nil
	case pgwire.OIDNumeric:
		s, err := numericBinaryText(b)
		if err != nil {
			return bad()
		}
		return s, nil
	case pgwire.OIDText, pgwire.OIDVarchar, pgwire.OIDBpchar, pgwire.OIDName, pgwire.OIDJSON, pgwire.OIDUnknown, 0:
		return string(b), nil
	case pgwire.OIDJSONB:
		if len(b) == 0 || b[0] != 1 {
			return bad()
		}
		return string(b[1:]), nil
	}
	return nil, errorf(codeNotSupported, fmt.Sprintf("binary parameters of type %d are not supported; send them as text", oid))
}

// timestampText writes t as DuckDB reads a TIMESTAMP: the year in
// astronomical numbering (0 is 1 BC, -32 is 33 BC), at least four digits.
func timestampText(t time.Time) string {
	y := t.Year()
	sign := ""
	if y < 0 {
		sign, y = "-", -y
	}
	return fmt.Sprintf("%s%04d-%s", sign, y, t.Format("01-02 15:04:05.999999"))
}

// parseIntParam reads an integer parameter's text as int2in, int4in and
// int8in do: 22P02 for bad syntax, 22003 out of the type's range.
func parseIntParam(oid uint32, s string) (driver.Value, error) {
	bits, name := 64, "bigint"
	switch oid {
	case pgwire.OIDInt2:
		bits, name = 16, "smallint"
	case pgwire.OIDInt4:
		bits, name = 32, "integer"
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, bits)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return nil, errorf(codeOutOfRange, fmt.Sprintf("value %q is out of range for type %s", s, name))
		}
		return nil, errorf(codeInvalidText, fmt.Sprintf("invalid input syntax for type %s: %q", name, s))
	}
	return n, nil
}

// decodeByteaText reads bytea's text input as PostgreSQL's byteain does:
// the hex form (\x, pairs of digits, whitespace between pairs) or the
// escape form (\\ for a backslash, \ooo for an octal byte).
func decodeByteaText(s string) (driver.Value, error) {
	if h, ok := strings.CutPrefix(s, `\x`); ok {
		out := make([]byte, 0, len(h)/2)
		for i := 0; i < len(h); {
			if c := h[i]; c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				i++
				continue
			}
			if i+1 >= len(h) {
				return nil, errorf(codeInvalidText, "invalid hexadecimal data: odd number of digits")
			}
			hi, ok1 := hexDigit(h[i])
			lo, ok2 := hexDigit(h[i+1])
			if !ok1 || !ok2 {
				return nil, errorf(codeInvalidText, "invalid hexadecimal digit")
			}
			out = append(out, hi<<4|lo)
			i += 2
		}
		return out, nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		switch {
		case i+1 < len(s) && s[i+1] == '\\':
			out = append(out, '\\')
			i++
		case i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '3' && isOctal(s[i+2]) && isOctal(s[i+3]):
			out = append(out, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 3
		default:
			return nil, errorf(codeInvalidText, "invalid input syntax for type bytea")
		}
	}
	return out, nil
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// numericBinaryText decodes numeric_send's format to its text form.
func numericBinaryText(b []byte) (string, error) {
	if len(b) < 8 {
		return "", fmt.Errorf("short numeric")
	}
	n := int(binary.BigEndian.Uint16(b))
	weight := int(int16(binary.BigEndian.Uint16(b[2:])))
	sign := binary.BigEndian.Uint16(b[4:])
	dscale := int(binary.BigEndian.Uint16(b[6:]))
	if len(b) != 8+2*n {
		return "", fmt.Errorf("numeric length")
	}
	switch sign {
	case 0xC000:
		return "NaN", nil
	case 0xD000:
		return "Infinity", nil
	case 0xF000:
		return "-Infinity", nil
	}
	var sb strings.Builder
	if sign == 0x4000 {
		sb.WriteByte('-')
	}
	digit := func(i int) int {
		if i < 0 || i >= n {
			return 0
		}
		return int(binary.BigEndian.Uint16(b[8+2*i:]))
	}
	if weight < 0 {
		sb.WriteByte('0')
	} else {
		for i := 0; i <= weight; i++ {
			if i == 0 {
				sb.WriteString(strconv.Itoa(digit(i)))
			} else {
				fmt.Fprintf(&sb, "%04d", digit(i))
			}
		}
	}
	if dscale > 0 {
		sb.WriteByte('.')
		var frac strings.Builder
		for i := weight + 1; frac.Len() < dscale; i++ {
			fmt.Fprintf(&frac, "%04d", digit(i))
		}
		sb.WriteString(frac.String()[:dscale])
	}
	return sb.String(), nil
}
