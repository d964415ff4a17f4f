// Writing copybin vectors straight into DuckDB data chunk vectors.

package duckload

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/duckdb/duckdb-go/v2/mapping"
	"github.com/qpkit/qpkit/pkg/copybin"
)

// columnWriter copies one column of a batch into a DuckDB vector, in the
// vector's physical layout.
type columnWriter struct {
	name string
	kind copybin.Kind
	phys mapping.Type // decimal: the internal integer type
	elem *columnWriter
}

// wantType is the DuckDB type id each kind is written into.
var wantType = map[copybin.Kind]mapping.Type{
	copybin.KindBool: mapping.TypeBoolean, copybin.KindInt16: mapping.TypeSmallInt,
	copybin.KindInt32: mapping.TypeInteger, copybin.KindInt64: mapping.TypeBigInt,
	copybin.KindFloat32: mapping.TypeFloat, copybin.KindFloat64: mapping.TypeDouble,
	copybin.KindDecimal: mapping.TypeDecimal, copybin.KindText: mapping.TypeVarchar,
	copybin.KindJSON: mapping.TypeVarchar, copybin.KindBytes: mapping.TypeBlob,
	copybin.KindUUID: mapping.TypeUUID, copybin.KindDate: mapping.TypeDate,
	copybin.KindTime: mapping.TypeTime, copybin.KindTimestamp: mapping.TypeTimestamp,
	copybin.KindTimestampTZ: mapping.TypeTimestampTZ, copybin.KindInterval: mapping.TypeInterval,
	copybin.KindList: mapping.TypeList, copybin.KindUint64: mapping.TypeUBigInt,
	copybin.KindTimeTZ: mapping.TypeTimeTZ,
}

func newColumnWriter(c copybin.Column, lt mapping.LogicalType) (columnWriter, error) {
	kind, elem, err := c.Kind()
	if err != nil {
		return columnWriter{}, err
	}
	w, err := kindWriter(c, kind, lt)
	if err != nil {
		return columnWriter{}, err
	}
	if kind == copybin.KindList {
		child := mapping.ListTypeChildType(lt)
		defer mapping.DestroyLogicalType(&child)
		ew, err := kindWriter(c, elem, child)
		if err != nil {
			return columnWriter{}, err
		}
		w.elem = &ew
	}
	return w, nil
}

func kindWriter(c copybin.Column, k copybin.Kind, lt mapping.LogicalType) (columnWriter, error) {
	got := mapping.GetTypeId(lt)
	if want := wantType[k]; got != want {
		return columnWriter{}, fmt.Errorf("column %s: DuckDB column type id %d, want %d for %v", copybin.QuoteIdent(c.Name), got, want, k)
	}
	w := columnWriter{name: c.Name, kind: k, phys: got}
	if k == copybin.KindDecimal {
		width, scale, err := c.DecimalShape()
		if err != nil {
			return w, err
		}
		if int(mapping.DecimalWidth(lt)) != width || int(mapping.DecimalScale(lt)) != scale {
			return w, fmt.Errorf("column %s: DuckDB DECIMAL(%d,%d), want DECIMAL(%d,%d)", copybin.QuoteIdent(c.Name),
				mapping.DecimalWidth(lt), mapping.DecimalScale(lt), width, scale)
		}
		w.phys = mapping.DecimalInternalType(lt)
	}
	return w, nil
}

// hugeint is DuckDB's 128-bit integer layout.
type hugeint struct {
	lo uint64
	hi int64
}

// interval is DuckDB's interval layout.
type interval struct {
	months, days int32
	micros       int64
}

// timeTZBits is DuckDB's dtime_tz_t: the microseconds in the top 40 bits,
// then the offset (seconds east) as 57599 - offset in the low 24, so that
// the bits sort by time, then by offset.
func timeTZBits(micros, offset int64) uint64 {
	const maxOffset = 16*60*60 - 1
	return uint64(micros)<<24 | uint64(maxOffset-offset)
}

// listEntry is DuckDB's list_entry_t.
type listEntry struct{ offset, length uint64 }

// write copies src rows [from, from+n) to rows [at, at+n) of vec.
func (w *columnWriter) write(vec mapping.Vector, at int, src *copybin.Vector, from, n int, arena *strArena) error {
	if src.Kind != w.kind {
		return fmt.Errorf("batch column is %v, writer expects %v", src.Kind, w.kind)
	}
	if src.NullCount > 0 {
		setNulls(vec, at, src.Nulls[from:from+n])
	}
	data := mapping.VectorGetData(vec)
	switch w.kind {
	case copybin.KindBool:
		dst := unsafe.Slice((*bool)(data), at+n)[at:]
		copy(dst, src.Bool[from:from+n])
	case copybin.KindInt16:
		dst := unsafe.Slice((*int16)(data), at+n)[at:]
		for i, v := range src.Int[from : from+n] {
			dst[i] = int16(v)
		}
	case copybin.KindInt32, copybin.KindDate:
		dst := unsafe.Slice((*int32)(data), at+n)[at:]
		for i, v := range src.Int[from : from+n] {
			dst[i] = int32(v)
		}
	case copybin.KindInt64, copybin.KindTime, copybin.KindTimestamp, copybin.KindTimestampTZ, copybin.KindUint64:
		copy(unsafe.Slice((*int64)(data), at+n)[at:], src.Int[from:from+n])
	case copybin.KindTimeTZ:
		dst := unsafe.Slice((*uint64)(data), at+n)[at:]
		for i := range n {
			dst[i] = timeTZBits(src.Int[from+i], src.Hi[from+i])
		}
	case copybin.KindFloat32:
		dst := unsafe.Slice((*float32)(data), at+n)[at:]
		for i, v := range src.Float[from : from+n] {
			dst[i] = float32(v)
		}
	case copybin.KindFloat64:
		copy(unsafe.Slice((*float64)(data), at+n)[at:], src.Float[from:from+n])
	case copybin.KindDecimal:
		writeDecimal(w.phys, data, at, src, from, n)
	case copybin.KindInterval:
		dst := unsafe.Slice((*interval)(data), at+n)[at:]
		for i := range n {
			h := src.Hi[from+i]
			dst[i] = interval{months: int32(h >> 32), days: int32(uint32(h)), micros: src.Int[from+i]}
		}
	case copybin.KindUUID:
		dst := unsafe.Slice((*hugeint)(data), at+n)[at:]
		for i := range n {
			if src.Nulls[from+i] {
				continue
			}
			b := src.Bytes(from + i)
			// DuckDB stores a UUID as a hugeint with the top bit flipped, so
			// that signed order is the UUID's byte order.
			dst[i] = hugeint{lo: binary.BigEndian.Uint64(b[8:]), hi: int64(binary.BigEndian.Uint64(b) ^ 1<<63)}
		}
	case copybin.KindText, copybin.KindJSON, copybin.KindBytes:
		writeStrings(vec, data, at, src, from, n, arena)
	case copybin.KindList:
		return w.writeList(vec, at, src, from, n, arena)
	default:
		return fmt.Errorf("no writer for %v", w.kind)
	}
	return nil
}

func writeDecimal(phys mapping.Type, data unsafe.Pointer, at int, src *copybin.Vector, from, n int) {
	switch phys {
	case mapping.TypeSmallInt:
		dst := unsafe.Slice((*int16)(data), at+n)[at:]
		for i, v := range src.Int[from : from+n] {
			dst[i] = int16(v)
		}
	case mapping.TypeInteger:
		dst := unsafe.Slice((*int32)(data), at+n)[at:]
		for i, v := range src.Int[from : from+n] {
			dst[i] = int32(v)
		}
	case mapping.TypeBigInt:
		copy(unsafe.Slice((*int64)(data), at+n)[at:], src.Int[from:from+n])
	default: // hugeint; the batch has Hi because its precision is above 18
		dst := unsafe.Slice((*hugeint)(data), at+n)[at:]
		for i := range n {
			dst[i] = hugeint{lo: uint64(src.Int[from+i]), hi: src.Hi[from+i]}
		}
	}
}

// writeStrings stores short values inline in the string_t array and longer
// ones as pointers into the arena, with no call into C; only when the arena
// is full (or absent) does DuckDB copy a string into the vector's heap.
func writeStrings(vec mapping.Vector, data unsafe.Pointer, at int, src *copybin.Vector, from, n int, arena *strArena) {
	dst := unsafe.Slice((*[16]byte)(data), at+n)[at:]
	for i := range n {
		if src.Nulls[from+i] {
			continue
		}
		b := src.Bytes(from + i)
		var s [16]byte // duckdb_string_t: length, then 12 bytes inline or a 4-byte prefix and a pointer
		binary.LittleEndian.PutUint32(s[:], uint32(len(b)))
		if len(b) <= 12 {
			copy(s[4:], b)
			dst[i] = s
			continue
		}
		if p := arena.put(b); p != 0 {
			copy(s[4:8], b)
			binary.LittleEndian.PutUint64(s[8:], uint64(p))
			dst[i] = s
			continue
		}
		mapping.VectorAssignStringElementLen(vec, mapping.IdxT(at+i), b)
	}
}

// writeList writes list entries and appends the elements to the child vector.
func (w *columnWriter) writeList(vec mapping.Vector, at int, src *copybin.Vector, from, n int, arena *strArena) error {
	base := int(mapping.ListVectorGetSize(vec))
	first, last := src.ListOff[from], src.ListOff[from+n]
	count := last - first
	if mapping.ListVectorReserve(vec, mapping.IdxT(base+count)) == mapping.StateError {
		return fmt.Errorf("reserve %d list elements", base+count)
	}
	entries := unsafe.Slice((*listEntry)(mapping.VectorGetData(vec)), at+n)[at:]
	for i := range n {
		s, e := src.ListOff[from+i], src.ListOff[from+i+1]
		entries[i] = listEntry{offset: uint64(base + s - first), length: uint64(e - s)}
	}
	if count > 0 {
		child := mapping.ListVectorGetChild(vec)
		if err := w.elem.write(child, base, src.Elem, first, count, arena); err != nil {
			return fmt.Errorf("list elements: %w", err)
		}
	}
	if mapping.ListVectorSetSize(vec, mapping.IdxT(base+count)) == mapping.StateError {
		return fmt.Errorf("set list size %d", base+count)
	}
	return nil
}

// setNulls clears the validity bits of the NULL rows.
func setNulls(vec mapping.Vector, at int, nulls []bool) {
	mapping.VectorEnsureValidityWritable(vec)
	mask := unsafe.Slice((*uint64)(mapping.VectorGetValidity(vec)), (at+len(nulls)+63)/64)
	for i, null := range nulls {
		if null {
			r := at + i
			mask[r>>6] &^= 1 << (r & 63)
		}
	}
}
