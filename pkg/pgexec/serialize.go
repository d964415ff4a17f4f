// Rows to JSON: one appender per kind of column type, reading the server's text format directly (FormatTSV rows: serialize_tsv.go).

package pgexec

import (
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"
)

// kind selects a column's JSON appender. It is decided once per column from
// the type OID, never per value.
type kind uint8

const (
	kString      kind = iota // JSON string of the text form (the fallback)
	kInt                     // int2, int4, oid, xid, cid: always exact numbers
	kInt8                    // int8, xid8: a number within ±2^53, else a string
	kFloat                   // float4, float8: a number; NaN and ±Infinity as strings
	kNumeric                 // a number if at most 15 significant digits, else a string
	kBool                    // true / false
	kBytea                   // base64 string
	kJSON                    // json, jsonb: embedded as is
	kTimestamp               // RFC 3339 without offset: 2024-01-02T03:04:05.123
	kTimestamptz             // RFC 3339: 2024-01-02T03:04:05.123+00:00
	kArray                   // JSON array of the element kind
	kBpchar                  // bpchar: a JSON string like kString; TSV trims the pad
)

type typeInfo struct {
	name string
	kind kind
	elem kind // for kArray
}

// types maps the built-in type OIDs the serializer knows. Anything else
// (enums, domains over unlisted types, composites, ranges, extension types)
// is written as a string of its text form and named "oid:N".
var types = map[uint32]typeInfo{
	16: {"bool", kBool, 0}, 17: {"bytea", kBytea, 0}, 18: {"char", kString, 0}, 19: {"name", kString, 0},
	20: {"int8", kInt8, 0}, 21: {"int2", kInt, 0}, 22: {"int2vector", kString, 0}, 23: {"int4", kInt, 0},
	24: {"regproc", kString, 0}, 25: {"text", kString, 0}, 26: {"oid", kInt, 0}, 27: {"tid", kString, 0},
	28: {"xid", kInt, 0}, 29: {"cid", kInt, 0}, 30: {"oidvector", kString, 0}, 114: {"json", kJSON, 0},
	142: {"xml", kString, 0}, 194: {"pg_node_tree", kString, 0}, 650: {"cidr", kString, 0},
	700: {"float4", kFloat, 0}, 701: {"float8", kFloat, 0}, 705: {"unknown", kString, 0},
	774: {"macaddr8", kString, 0}, 790: {"money", kString, 0}, 829: {"macaddr", kString, 0},
	869: {"inet", kString, 0}, 1033: {"aclitem", kString, 0}, 1042: {"bpchar", kBpchar, 0},
	1043: {"varchar", kString, 0}, 1082: {"date", kString, 0}, 1083: {"time", kString, 0},
	1114: {"timestamp", kTimestamp, 0}, 1184: {"timestamptz", kTimestamptz, 0},
	1186: {"interval", kString, 0}, 1266: {"timetz", kString, 0}, 1560: {"bit", kString, 0},
	1562: {"varbit", kString, 0}, 1700: {"numeric", kNumeric, 0}, 2205: {"regclass", kString, 0},
	2206: {"regtype", kString, 0}, 2249: {"record", kString, 0}, 2278: {"void", kString, 0},
	2950: {"uuid", kString, 0}, 3220: {"pg_lsn", kString, 0}, 3614: {"tsvector", kString, 0},
	3615: {"tsquery", kString, 0}, 3802: {"jsonb", kJSON, 0}, 3904: {"int4range", kString, 0},
	3906: {"numrange", kString, 0}, 3908: {"tsrange", kString, 0}, 3910: {"tstzrange", kString, 0},
	3912: {"daterange", kString, 0}, 3926: {"int8range", kString, 0}, 4072: {"jsonpath", kString, 0},
	5069: {"xid8", kInt8, 0},

	1000: {"bool[]", kArray, kBool}, 1001: {"bytea[]", kArray, kBytea}, 1002: {"char[]", kArray, kString},
	1003: {"name[]", kArray, kString}, 1005: {"int2[]", kArray, kInt}, 1007: {"int4[]", kArray, kInt},
	1008: {"regproc[]", kArray, kString}, 1009: {"text[]", kArray, kString}, 1014: {"bpchar[]", kArray, kString},
	1015: {"varchar[]", kArray, kString}, 1016: {"int8[]", kArray, kInt8}, 1021: {"float4[]", kArray, kFloat},
	1022: {"float8[]", kArray, kFloat}, 1028: {"oid[]", kArray, kInt}, 1040: {"macaddr[]", kArray, kString},
	1041: {"inet[]", kArray, kString}, 651: {"cidr[]", kArray, kString}, 143: {"xml[]", kArray, kString},
	1115: {"timestamp[]", kArray, kTimestamp}, 1182: {"date[]", kArray, kString}, 1183: {"time[]", kArray, kString},
	1185: {"timestamptz[]", kArray, kTimestamptz}, 1187: {"interval[]", kArray, kString},
	1231: {"numeric[]", kArray, kNumeric}, 1270: {"timetz[]", kArray, kString}, 791: {"money[]", kArray, kString},
	2210: {"regclass[]", kArray, kString}, 2211: {"regtype[]", kArray, kString}, 2951: {"uuid[]", kArray, kString},
	199: {"json[]", kArray, kJSON}, 3807: {"jsonb[]", kArray, kJSON}, 1561: {"bit[]", kArray, kString},
	1563: {"varbit[]", kArray, kString},
}

// colInfo is a result column as the serializer needs it; its name lives in
// exchange.names.
type colInfo struct {
	nameOff, nameLen int
	oid              uint32
	typ              typeInfo
}

// setColumns records the columns and writes the document's header.
func (x *exchange) setColumns(m *pgproto3.RowDescription) {
	for _, f := range m.Fields {
		ti, ok := types[f.DataTypeOID]
		if !ok {
			ti = typeInfo{name: "oid:" + strconv.FormatUint(uint64(f.DataTypeOID), 10), kind: kString}
		}
		x.cols = append(x.cols, colInfo{nameOff: len(x.names), nameLen: len(f.Name), oid: f.DataTypeOID, typ: ti})
		x.names = append(x.names, f.Name...)
	}
	x.doc = x.ser.appendHeader(x.doc, x.cols, x.names)
	x.header = true
}

// finish ends the document; statements without a row description get an
// empty column list.
func (x *exchange) finish() {
	if !x.header {
		x.doc = x.ser.appendHeader(x.doc, nil, nil)
		x.header = true
	}
	if x.ser.format == FormatTSV {
		x.doc = appendTSVFooter(x.doc, x.written, x.by)
		return
	}
	x.doc = appendTrailer(x.doc, x.written, x.by)
}

func (x *exchange) colName(i int) string {
	if i >= len(x.cols) {
		return "?"
	}
	c := x.cols[i]
	return string(x.names[c.nameOff : c.nameOff+c.nameLen])
}

// trailerRoom is reserved at the end of the document for
// `],"row_count":N,"truncated":true,"truncated_by":"bytes"}` (JSON) or
// "\n(N rows, truncated by bytes)" (TSV).
const trailerRoom = 80

// serializer writes the document. scratch is reused for decoding bytea and
// unescaping array elements.
type serializer struct {
	format  Format
	scratch []byte // decoded bytea
	elem    []byte // unescaped array element
}

// appendHeader starts the document: the columns and the opening of rows.
func (s *serializer) appendHeader(dst []byte, cols []colInfo, names []byte) []byte {
	if s.format == FormatTSV {
		return appendTSVHeader(dst, cols, names)
	}
	dst = append(dst, `{"columns":[`...)
	for i, c := range cols {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"name":`...)
		dst = appendString(dst, names[c.nameOff:c.nameOff+c.nameLen])
		dst = append(dst, `,"type":"`...)
		dst = append(dst, c.typ.name...)
		dst = append(dst, `"}`...)
	}
	return append(dst, `],"rows":[`...)
}

// appendRow adds one row unless that would make the document (begun at
// start) longer than maxBytes once the trailer is added; then it returns
// dst unchanged and false.
func (s *serializer) appendRow(dst []byte, start, maxBytes int, comma bool, vals [][]byte, cols []colInfo) ([]byte, bool) {
	if s.format == FormatTSV {
		return appendTSVRow(dst, start, maxBytes, vals, cols)
	}
	mark := len(dst)
	if comma {
		dst = append(dst, ',')
	}
	dst = append(dst, '[')
	for j, v := range vals {
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = s.appendValue(dst, v, cols[j].typ)
	}
	dst = append(dst, ']')
	if len(dst)-start+trailerRoom > maxBytes {
		return dst[:mark], false
	}
	return dst, true
}

// appendTrailer ends the document.
func appendTrailer(dst []byte, rows int, by string) []byte {
	dst = append(dst, `],"row_count":`...)
	dst = strconv.AppendInt(dst, int64(rows), 10)
	if by == "" {
		return append(dst, `,"truncated":false}`...)
	}
	dst = append(dst, `,"truncated":true,"truncated_by":"`...)
	dst = append(dst, by...)
	return append(dst, `"}`...)
}

// appendValue writes one value (nil is NULL) of type t.
func (s *serializer) appendValue(dst, v []byte, t typeInfo) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	switch t.kind {
	case kInt:
		return appendNumber(dst, v)
	case kInt8:
		return appendInt8(dst, v)
	case kFloat:
		return appendFloat(dst, v)
	case kNumeric:
		return appendNumeric(dst, v)
	case kBool:
		return appendBool(dst, v)
	case kBytea:
		return s.appendBytea(dst, v)
	case kJSON:
		return append(dst, v...) // the server validated it on input
	case kTimestamp:
		return appendTimestamp(dst, v, false)
	case kTimestamptz:
		return appendTimestamp(dst, v, true)
	case kArray:
		return s.appendArray(dst, v, t.elem)
	}
	return appendString(dst, v)
}

// safeASCII marks the bytes a JSON string may hold unescaped.
var safeASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. Invalid UTF-8 (possible only
// with a non-UTF8 server encoding) becomes U+FFFD.
func appendString(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if safeASCII[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"':
				dst = append(dst, '\\', '"')
			case '\\':
				dst = append(dst, '\\', '\\')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// maxExact is 2^53: every integer of at most this magnitude is exact in a
// float64, which is what JSON readers such as JavaScript parse numbers into.
const maxExact = 1 << 53

func appendInt8(dst, v []byte) []byte {
	d := v
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) <= 15 { // below 10^15 < 2^53
		return appendNumber(dst, v)
	}
	var u uint64
	for _, c := range d {
		if c < '0' || c > '9' || u > (1<<63)/10 {
			return appendString(dst, v)
		}
		u = u*10 + uint64(c-'0')
	}
	if u <= maxExact {
		return appendNumber(dst, v)
	}
	return appendString(dst, v)
}

// appendNumber writes v as a JSON number if it is one, else as a string.
// The server's text for numeric types always is (apart from NaN and
// Infinity, handled by the callers); the check keeps the document valid
// whatever arrives.
func appendNumber(dst, v []byte) []byte {
	if isJSONNumber(v) {
		return append(dst, v...)
	}
	return appendString(dst, v)
}

// isJSONNumber follows RFC 8259: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isJSONNumber(v []byte) bool {
	i := 0
	if i < len(v) && v[i] == '-' {
		i++
	}
	switch {
	case i < len(v) && v[i] == '0':
		i++
	case i < len(v) && v[i] >= '1' && v[i] <= '9':
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(v) && v[i] == '.' {
		i++
		j := i
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		j := i
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(v)
}

func appendFloat(dst, v []byte) []byte {
	// The text form is a JSON number except for NaN, Infinity, -Infinity.
	return appendNumber(dst, v) // NaN, Infinity and -Infinity are not JSON numbers
}

// appendNumeric writes numeric values with at most 15 significant digits
// and no smaller than 1e-307 (every such decimal survives a float64 round
// trip) as numbers; others, and NaN/±Infinity, as strings. Trailing zeros after the decimal point do
// not count; zeros before it do (they are magnitude).
func appendNumeric(dst, v []byte) []byte {
	if !isJSONNumber(v) {
		return appendString(dst, v) // NaN, Infinity, -Infinity
	}
	d := v
	if d[0] == '-' {
		d = d[1:]
	}
	end := len(d)
	for i, c := range d {
		if c == '.' {
			for end > i+1 && d[end-1] == '0' {
				end--
			}
			break
		}
	}
	sig := 0
	leading := true
	point, fracZeros := false, 0 // zeros after the point before the first significant digit
	for _, c := range d[:end] {
		if c == '.' {
			point = true
			continue
		}
		if c < '0' || c > '9' {
			return appendString(dst, v)
		}
		if leading && c == '0' {
			if point {
				fracZeros++
			}
			continue
		}
		leading = false
		sig++
	}
	// Integer digits count as significant, so a number is below 1e15; a
	// small one must stay at or above 1e-307, in float64's normal range
	// (below it a reader gets a rounded subnormal or 0).
	if sig > 15 || sig > 0 && fracZeros > 306 {
		return appendString(dst, v)
	}
	return append(dst, v...)
}

func appendBool(dst, v []byte) []byte {
	if len(v) == 1 {
		switch v[0] {
		case 't':
			return append(dst, "true"...)
		case 'f':
			return append(dst, "false"...)
		}
	}
	return appendString(dst, v)
}

// appendBytea turns the hex output format (\x0a0b) into a base64 string.
// Anything else (bytea_output=escape) is written as its text.
func (s *serializer) appendBytea(dst, v []byte) []byte {
	if len(v) < 2 || v[0] != '\\' || v[1] != 'x' || len(v)%2 != 0 {
		return appendString(dst, v)
	}
	n := (len(v) - 2) / 2
	if cap(s.scratch) < n {
		s.scratch = make([]byte, n)
	}
	raw := s.scratch[:n]
	if _, err := hex.Decode(raw, v[2:]); err != nil {
		return appendString(dst, v)
	}
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, raw)
	return append(dst, '"')
}

// appendTimestamp rewrites the ISO text form "2024-01-02 03:04:05.123456"
// (with "+05" or "+05:30" for timestamptz) as RFC 3339. Forms RFC 3339
// cannot hold (infinity, BC dates, years beyond 9999, offsets with
// seconds) and other DateStyles are written as their text.
func appendTimestamp(dst, v []byte, tz bool) []byte {
	const base = len("2006-01-02 15:04:05")
	if len(v) < base || v[4] != '-' || v[7] != '-' || v[10] != ' ' || v[13] != ':' || v[16] != ':' ||
		!digits(v[0:4]) || !digits(v[5:7]) || !digits(v[8:10]) || !digits(v[11:13]) || !digits(v[14:16]) || !digits(v[17:19]) {
		return appendString(dst, v)
	}
	i := base
	if i < len(v) && v[i] == '.' {
		i++
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
		}
	}
	body := v[:i]
	rest := v[i:]
	var off [6]byte
	offLen := 0
	if tz {
		// +HH or +HH:MM, nothing after it.
		switch {
		case len(rest) == 3 && (rest[0] == '+' || rest[0] == '-') && digits(rest[1:3]):
			off = [6]byte{rest[0], rest[1], rest[2], ':', '0', '0'}
		case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && digits(rest[1:3]) && rest[3] == ':' && digits(rest[4:6]):
			copy(off[:], rest)
		default:
			return appendString(dst, v)
		}
		offLen = 6
	} else if len(rest) != 0 {
		return appendString(dst, v)
	}
	dst = append(dst, '"')
	dst = append(dst, body[:10]...)
	dst = append(dst, 'T')
	dst = append(dst, body[11:]...)
	dst = append(dst, off[:offLen]...)
	return append(dst, '"')
}

func digits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
