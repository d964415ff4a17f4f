// Batches and vectors: the decoder's reusable columnar output.

package copybin

import "slices"

// Batch holds up to a few thousand decoded rows column by column. Next
// overwrites it; its slices are reused from call to call, so a consumer must
// copy what it keeps.
type Batch struct {
	// Len is the number of rows.
	Len int
	// Cols holds one vector per column, in stream order.
	Cols []Vector
}

// Vector holds one column of a Batch. Which slices are used depends on Kind
// (see the Kind constants); every used slice has one entry per row, NULL rows
// included (with a zero value), so row i is always at index i.
type Vector struct {
	Kind Kind
	// Precision and Scale of a KindDecimal vector (the DuckDB DECIMAL shape).
	Precision, Scale int

	// Nulls[i] is true when row i is NULL; NullCount counts them.
	Nulls     []bool
	NullCount int

	Int   []int64
	Hi    []int64
	Float []float64
	Bool  []bool
	// Data holds the bytes of variable-length values; value i is
	// Data[Off[i]:Off[i+1]].
	Data []byte
	Off  []int
	// ListOff: list i holds Elem rows ListOff[i]..ListOff[i+1].
	ListOff []int
	Elem    *Vector
}

// Bytes returns value i of a Data/Off vector, aliasing Data.
func (v *Vector) Bytes(i int) []byte { return v.Data[v.Off[i]:v.Off[i+1]] }

// Len is the number of values in the vector.
func (v *Vector) Len() int {
	switch v.Kind {
	case KindBool:
		return len(v.Bool)
	case KindFloat32, KindFloat64:
		return len(v.Float)
	case KindText, KindJSON, KindBytes, KindUUID:
		return len(v.Off) - 1
	case KindList:
		return len(v.ListOff) - 1
	}
	return len(v.Int)
}

// fillNulls extends Nulls with false up to Len: while decoding, Nulls only
// grows when a NULL arrives, which saves a store per value.
func (v *Vector) fillNulls() {
	if n := v.Len(); len(v.Nulls) < n {
		old := len(v.Nulls)
		v.Nulls = slices.Grow(v.Nulls, n-old)[:n]
		clear(v.Nulls[old:])
	}
	if v.Elem != nil {
		v.Elem.fillNulls()
	}
}

func (v *Vector) reset() {
	v.Nulls = v.Nulls[:0]
	v.NullCount = 0
	v.Int = v.Int[:0]
	v.Hi = v.Hi[:0]
	v.Float = v.Float[:0]
	v.Bool = v.Bool[:0]
	v.Data = v.Data[:0]
	v.Off = append(v.Off[:0], 0)
	v.ListOff = append(v.ListOff[:0], 0)
	if v.Elem != nil {
		v.Elem.reset()
	}
}

// truncate drops the values after the first n, undoing a partly decoded
// tuple.
func (v *Vector) truncate(n int) {
	if len(v.Nulls) > n {
		for _, null := range v.Nulls[n:] {
			if null {
				v.NullCount--
			}
		}
		v.Nulls = v.Nulls[:n]
	}
	v.Int = v.Int[:min(n, len(v.Int))]
	v.Hi = v.Hi[:min(n, len(v.Hi))]
	v.Float = v.Float[:min(n, len(v.Float))]
	v.Bool = v.Bool[:min(n, len(v.Bool))]
	if len(v.Off) > n+1 {
		v.Off = v.Off[:n+1]
		v.Data = v.Data[:v.Off[n]]
	}
	if len(v.ListOff) > n+1 {
		v.ListOff = v.ListOff[:n+1]
		v.Elem.truncate(v.ListOff[n])
	}
}

// appendNull adds a NULL row with a zero value in the kind's slices.
func (v *Vector) appendNull() {
	v.fillNulls()
	v.Nulls = append(v.Nulls, true)
	v.NullCount++
	switch v.Kind {
	case KindBool:
		v.Bool = append(v.Bool, false)
	case KindFloat32, KindFloat64:
		v.Float = append(v.Float, 0)
	case KindText, KindJSON, KindBytes, KindUUID:
		v.Off = append(v.Off, len(v.Data))
	case KindList:
		v.ListOff = append(v.ListOff, v.Elem.Len())
	case KindDecimal:
		v.Int = append(v.Int, 0)
		if v.Precision > 18 {
			v.Hi = append(v.Hi, 0)
		}
	case KindInterval, KindTimeTZ:
		v.Int = append(v.Int, 0)
		v.Hi = append(v.Hi, 0)
	default:
		v.Int = append(v.Int, 0)
	}
}

// initBatch shapes b for the plans, keeping its buffers when it fits.
func initBatch(b *Batch, plans []plan) {
	if len(b.Cols) != len(plans) {
		b.Cols = make([]Vector, len(plans))
	}
	for i, p := range plans {
		v := &b.Cols[i]
		setShape(v, p.kind, p)
		if p.kind == KindList {
			if v.Elem == nil {
				v.Elem = &Vector{}
			}
			setShape(v.Elem, p.elem, p)
		} else {
			v.Elem = nil
		}
		v.reset()
	}
	b.Len = 0
}

func setShape(v *Vector, k Kind, p plan) {
	v.Kind = k
	v.Precision, v.Scale = 0, 0
	if k == KindDecimal {
		v.Precision, v.Scale = p.prec, p.scale
	}
}
