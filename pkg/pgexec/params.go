// Bound parameters: JSON-shaped Go values to text-format wire values whose types the server infers.

package pgexec

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// maxParams is the extended protocol's limit (an int16 count in Bind).
const maxParams = math.MaxUint16

// encodeParams appends the text form of each parameter to buf and sets
// vals[i] to it (nil for SQL NULL). Parameters go in text format with type
// OID 0, so the server infers each type from its use ($1::int, col = $1),
// exactly as if the value had been written as an untyped literal.
//
// Accepted: nil, string, []byte, bool, every integer type, float32/64
// (NaN and ±Inf as "NaN"/"Infinity"), json.Number, and []any or
// map[string]any (sent as JSON text, for json/jsonb parameters).
func encodeParams(params []any, buf []byte, vals [][]byte) ([]byte, [][]byte, error) {
	if len(params) > maxParams {
		return buf, vals, fmt.Errorf("pgexec: %d parameters, the protocol allows %d", len(params), maxParams)
	}
	buf = buf[:0]
	// ends[i] is the end offset of parameter i in buf, or -1 for NULL; the
	// slices are cut once buf has stopped growing.
	var endsArr [16]int
	ends := endsArr[:0]
	for i, p := range params {
		var err error
		null := false
		switch v := p.(type) {
		case nil:
			null = true
		case string:
			buf = append(buf, v...)
		case []byte:
			if v == nil {
				null = true
			}
			buf = append(buf, v...)
		case bool:
			buf = strconv.AppendBool(buf, v)
		case int:
			buf = strconv.AppendInt(buf, int64(v), 10)
		case int8:
			buf = strconv.AppendInt(buf, int64(v), 10)
		case int16:
			buf = strconv.AppendInt(buf, int64(v), 10)
		case int32:
			buf = strconv.AppendInt(buf, int64(v), 10)
		case int64:
			buf = strconv.AppendInt(buf, v, 10)
		case uint:
			buf = strconv.AppendUint(buf, uint64(v), 10)
		case uint8:
			buf = strconv.AppendUint(buf, uint64(v), 10)
		case uint16:
			buf = strconv.AppendUint(buf, uint64(v), 10)
		case uint32:
			buf = strconv.AppendUint(buf, uint64(v), 10)
		case uint64:
			buf = strconv.AppendUint(buf, v, 10)
		case float32:
			buf = appendFloatParam(buf, float64(v), 32)
		case float64:
			buf = appendFloatParam(buf, v, 64)
		case json.Number:
			buf = append(buf, v...)
		case []any, map[string]any:
			var b []byte
			b, err = json.Marshal(v)
			buf = append(buf, b...)
		default:
			err = fmt.Errorf("unsupported type %T", p)
		}
		if err != nil {
			return buf, vals, fmt.Errorf("pgexec: parameter $%d: %w", i+1, err)
		}
		if null {
			ends = append(ends, -1)
		} else {
			ends = append(ends, len(buf))
		}
	}
	vals = vals[:0]
	start := 0
	for _, end := range ends {
		if end < 0 {
			vals = append(vals, nil)
			continue
		}
		vals = append(vals, buf[start:end:end])
		start = end
	}
	return buf, vals, nil
}

// appendFloatParam writes integral values without an exponent (so 3.0 can
// bind to an integer parameter) and the rest in the shortest exact form.
func appendFloatParam(buf []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(buf, "NaN"...)
	case math.IsInf(f, 1):
		return append(buf, "Infinity"...)
	case math.IsInf(f, -1):
		return append(buf, "-Infinity"...)
	case f == math.Trunc(f) && math.Abs(f) < 1e21:
		return strconv.AppendFloat(buf, f, 'f', -1, bits)
	}
	return strconv.AppendFloat(buf, f, 'g', -1, bits)
}
