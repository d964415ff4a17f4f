// Arrow arrays over copybin vectors, built from buffers, not value by value.

package duckload

import (
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/qpkit/qpkit/pkg/copybin"
)

// arrowColumn turns one column's vectors into Arrow arrays. Its scratch
// buffers back the arrays it returns, so an array is valid only until the
// next call.
type arrowColumn struct {
	name string
	kind copybin.Kind
	typ  arrow.DataType
	elem *arrowColumn

	valid []byte
	vals  []byte
	offs  []int32
	text  []byte
}

func newArrowColumn(c copybin.Column) (arrowColumn, error) {
	kind, elem, err := c.Kind()
	if err != nil {
		return arrowColumn{}, err
	}
	ac := arrowColumn{name: c.Name, kind: kind}
	if kind == copybin.KindList {
		e := arrowColumn{name: c.Name, kind: elem}
		if e.typ, err = arrowType(c, elem); err != nil {
			return ac, err
		}
		ac.elem = &e
		ac.typ = arrow.ListOf(e.typ)
		return ac, nil
	}
	ac.typ, err = arrowType(c, kind)
	return ac, err
}

func arrowType(c copybin.Column, k copybin.Kind) (arrow.DataType, error) {
	switch k {
	case copybin.KindBool:
		return arrow.FixedWidthTypes.Boolean, nil
	case copybin.KindInt16:
		return arrow.PrimitiveTypes.Int16, nil
	case copybin.KindInt32:
		return arrow.PrimitiveTypes.Int32, nil
	case copybin.KindInt64:
		return arrow.PrimitiveTypes.Int64, nil
	case copybin.KindUint64:
		return arrow.PrimitiveTypes.Uint64, nil
	case copybin.KindFloat32:
		return arrow.PrimitiveTypes.Float32, nil
	case copybin.KindFloat64:
		return arrow.PrimitiveTypes.Float64, nil
	case copybin.KindDecimal:
		w, s, err := c.DecimalShape()
		if err != nil {
			return nil, err
		}
		return &arrow.Decimal128Type{Precision: int32(w), Scale: int32(s)}, nil
	case copybin.KindText, copybin.KindJSON, copybin.KindInterval, copybin.KindTimeTZ:
		return arrow.BinaryTypes.String, nil
	case copybin.KindBytes:
		return arrow.BinaryTypes.Binary, nil
	case copybin.KindUUID:
		return extensions.NewUUIDType(), nil
	case copybin.KindDate:
		return arrow.FixedWidthTypes.Date32, nil
	case copybin.KindTime:
		return arrow.FixedWidthTypes.Time64us, nil
	case copybin.KindTimestamp:
		return &arrow.TimestampType{Unit: arrow.Microsecond}, nil
	case copybin.KindTimestampTZ:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, nil
	}
	return nil, fmt.Errorf("column %s: no Parquet type for %v", copybin.QuoteIdent(c.Name), k)
}

// appendTimeTZ writes HH:MM:SS.ffffff+HH:MM:SS, which DuckDB parses
// exactly (24:00:00 included).
func appendTimeTZ(b []byte, micros, offset int64) []byte {
	two := func(b []byte, x int64) []byte { return append(b, byte('0'+x/10), byte('0'+x%10)) }
	s, us := micros/1000000, micros%1000000
	b = two(b, s/3600)
	b = append(b, ':')
	b = two(b, s/60%60)
	b = append(b, ':')
	b = two(b, s%60)
	b = append(b, '.')
	b = fmt.Appendf(b, "%06d", us)
	sign := byte('+')
	if offset < 0 {
		sign, offset = '-', -offset
	}
	b = append(b, sign)
	b = two(b, offset/3600)
	b = append(b, ':')
	b = two(b, offset/60%60)
	b = append(b, ':')
	return two(b, offset%60)
}

func arrowRecord(schema *arrow.Schema, cols []arrow.Array, n int) arrow.RecordBatch {
	rec := array.NewRecordBatch(schema, cols, int64(n))
	for _, a := range cols {
		a.Release() // the record holds its own reference
	}
	return rec
}

func asBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// view is b as n values of T.
func view[T any](b []byte, n int) []T {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}

// grow returns b resized to n bytes, zeroed.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// array builds the Arrow array of the first n values of v.
func (ac *arrowColumn) array(v *copybin.Vector, n int) (arrow.Array, error) {
	data, err := ac.data(v, n)
	if err != nil {
		return nil, err
	}
	defer data.Release()
	if et, ok := ac.typ.(arrow.ExtensionType); ok {
		storage := array.MakeFromData(data)
		defer storage.Release()
		return array.NewExtensionArrayWithStorage(et, storage), nil
	}
	return array.MakeFromData(data), nil
}

func (ac *arrowColumn) data(v *copybin.Vector, n int) (arrow.ArrayData, error) {
	var nullBuf *memory.Buffer
	if v.NullCount > 0 {
		ac.valid = grow(ac.valid, (n+7)/8)
		for i, null := range v.Nulls[:n] {
			if !null {
				ac.valid[i>>3] |= 1 << (i & 7)
			}
		}
		nullBuf = memory.NewBufferBytes(ac.valid)
	}
	typ := ac.typ
	if et, ok := typ.(arrow.ExtensionType); ok {
		typ = et.StorageType()
	}
	var vals *memory.Buffer
	switch ac.kind {
	case copybin.KindBool:
		ac.vals = grow(ac.vals, (n+7)/8)
		for i, b := range v.Bool[:n] {
			if b {
				ac.vals[i>>3] |= 1 << (i & 7)
			}
		}
		vals = memory.NewBufferBytes(ac.vals)
	case copybin.KindInt16:
		ac.vals = grow(ac.vals, 2*n)
		dst := view[int16](ac.vals, n)
		for i, x := range v.Int[:n] {
			dst[i] = int16(x)
		}
		vals = memory.NewBufferBytes(ac.vals)
	case copybin.KindInt32, copybin.KindDate:
		ac.vals = grow(ac.vals, 4*n)
		dst := view[int32](ac.vals, n)
		for i, x := range v.Int[:n] {
			dst[i] = int32(x)
		}
		vals = memory.NewBufferBytes(ac.vals)
	case copybin.KindInt64, copybin.KindTime, copybin.KindTimestamp, copybin.KindTimestampTZ, copybin.KindUint64:
		vals = memory.NewBufferBytes(asBytes(v.Int[:n]))
	case copybin.KindFloat32:
		ac.vals = grow(ac.vals, 4*n)
		dst := view[float32](ac.vals, n)
		for i, x := range v.Float[:n] {
			dst[i] = float32(x)
		}
		vals = memory.NewBufferBytes(ac.vals)
	case copybin.KindFloat64:
		vals = memory.NewBufferBytes(asBytes(v.Float[:n]))
	case copybin.KindDecimal:
		ac.vals = grow(ac.vals, 16*n)
		dst := view[[2]uint64](ac.vals, n) // little-endian low, high
		for i := range n {
			lo := uint64(v.Int[i])
			hi := uint64(v.Int[i] >> 63)
			if v.Precision > 18 {
				hi = uint64(v.Hi[i])
			}
			dst[i] = [2]uint64{lo, hi}
		}
		vals = memory.NewBufferBytes(ac.vals)
	case copybin.KindUUID:
		ac.vals = grow(ac.vals, 16*n)
		for i := range n {
			copy(ac.vals[16*i:], v.Bytes(i))
		}
		vals = memory.NewBufferBytes(ac.vals)
	case copybin.KindText, copybin.KindJSON, copybin.KindBytes:
		if v.Off[n] > math.MaxInt32 {
			return nil, fmt.Errorf("%d bytes of text in one batch; Arrow strings hold at most 2 GiB", v.Off[n])
		}
		ac.offs = ac.offs[:0]
		for _, o := range v.Off[:n+1] {
			ac.offs = append(ac.offs, int32(o))
		}
		return array.NewData(typ, n, []*memory.Buffer{nullBuf, memory.NewBufferBytes(asBytes(ac.offs)), memory.NewBufferBytes(v.Data[:v.Off[n]])}, nil, v.NullCount, 0), nil
	case copybin.KindInterval:
		// Parquet's INTERVAL keeps milliseconds only; text keeps everything and
		// DuckDB casts it back to INTERVAL on load.
		ac.offs = append(ac.offs[:0], 0)
		ac.text = ac.text[:0]
		for i := range n {
			if !v.Nulls[i] {
				h := v.Hi[i]
				ac.text = strconv.AppendInt(ac.text, h>>32, 10)
				ac.text = append(ac.text, " months "...)
				ac.text = strconv.AppendInt(ac.text, int64(int32(uint32(h))), 10)
				ac.text = append(ac.text, " days "...)
				us := v.Int[i]
				if us < -(1<<62) || us > 1<<62 {
					// DuckDB reads microseconds into an int64 by absolute
					// value, which the smallest int64 does not fit: whole
					// hours, then the rest.
					ac.text = strconv.AppendInt(ac.text, us/3_600_000_000, 10)
					ac.text = append(ac.text, " hours "...)
					us %= 3_600_000_000
				}
				ac.text = strconv.AppendInt(ac.text, us, 10)
				ac.text = append(ac.text, " microseconds"...)
			}
			ac.offs = append(ac.offs, int32(len(ac.text)))
		}
		return array.NewData(typ, n, []*memory.Buffer{nullBuf, memory.NewBufferBytes(asBytes(ac.offs)), memory.NewBufferBytes(ac.text)}, nil, v.NullCount, 0), nil
	case copybin.KindTimeTZ:
		// Parquet's TIME keeps no offset; DuckDB casts this text back to
		// the exact TIMETZ on load.
		ac.offs = append(ac.offs[:0], 0)
		ac.text = ac.text[:0]
		for i := range n {
			if !v.Nulls[i] {
				ac.text = appendTimeTZ(ac.text, v.Int[i], v.Hi[i])
			}
			ac.offs = append(ac.offs, int32(len(ac.text)))
		}
		return array.NewData(typ, n, []*memory.Buffer{nullBuf, memory.NewBufferBytes(asBytes(ac.offs)), memory.NewBufferBytes(ac.text)}, nil, v.NullCount, 0), nil
	case copybin.KindList:
		ac.offs = ac.offs[:0]
		for _, o := range v.ListOff[:n+1] {
			ac.offs = append(ac.offs, int32(o))
		}
		child, err := ac.elem.data(v.Elem, v.ListOff[n])
		if err != nil {
			return nil, err
		}
		defer child.Release()
		return array.NewData(typ, n, []*memory.Buffer{nullBuf, memory.NewBufferBytes(asBytes(ac.offs))}, []arrow.ArrayData{child}, v.NullCount, 0), nil
	default:
		return nil, fmt.Errorf("no Arrow conversion for %v", ac.kind)
	}
	return array.NewData(typ, n, []*memory.Buffer{nullBuf, vals}, nil, v.NullCount, 0), nil
}
