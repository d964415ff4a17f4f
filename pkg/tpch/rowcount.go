// Scale-factor arithmetic: how dbgen turns -s into row counts.

package tpch

import (
	"context"
	"fmt"
	"math"
)

// MaxScaleFactor bounds the scale factor so that every key and count fits
// in 64-bit arithmetic with room to spare. dbgen itself only warns above
// 100000 ("not yet supported").
const MaxScaleFactor = 1e9

// Base row counts per unit of scale (dbgen's tdefs).
const (
	basePart     = 200000
	baseSupplier = 10000
	baseCustomer = 150000
	baseOrders   = 150000 * 10 // ORDERS_PER_CUST
	suppPerPart  = 4
)

// scale is the scale factor the way dbgen interprets it. Below 1 each
// table's base count is multiplied by the factor in thousandths (truncated,
// at least one row) and the integer scale stays 1; from 1 up the factor is
// truncated to an integer, so -s 1.5 produces the SF 1 data set.
type scale struct {
	sf       float64
	n        int64 // dbgen's integer "scale"
	part     int64 // base counts after fractional scaling
	supplier int64
	customer int64
	orders   int64
}

func newScale(sf float64) (scale, error) {
	if math.IsNaN(sf) || math.IsInf(sf, 0) {
		return scale{}, fmt.Errorf("scale factor %v is not a number", sf)
	}
	if sf <= 0 {
		return scale{}, fmt.Errorf("scale factor %v must be positive", sf)
	}
	if sf > MaxScaleFactor {
		return scale{}, fmt.Errorf("scale factor %v is larger than %g", sf, MaxScaleFactor)
	}
	s := scale{sf: sf, n: 1, part: basePart, supplier: baseSupplier, customer: baseCustomer, orders: baseOrders}
	if sf < 1 {
		// dbgen: int_scale = (int)(1000 * flt_scale); base = int_scale*base/1000.
		k := int64(1000 * sf)
		f := func(base int64) int64 {
			v := k * base / 1000
			if v < 1 {
				v = 1
			}
			return v
		}
		s.part, s.supplier, s.customer, s.orders = f(basePart), f(baseSupplier), f(baseCustomer), f(baseOrders)
	} else {
		s.n = int64(sf)
	}
	return s, nil
}

func (s scale) partRows() int64  { return s.part * s.n }
func (s scale) suppRows() int64  { return s.supplier * s.n }
func (s scale) custRows() int64  { return s.customer * s.n }
func (s scale) orderRows() int64 { return s.orders * s.n }

// clerks is the number of distinct o_clerk values.
func (s scale) clerks() int64 { return max(s.n*1000, 1000) }

// use64 reports whether dbgen draws o_custkey and l_partkey from its
// 64-bit generator, which it does from scale 30000 on.
func (s scale) use64() bool { return s.n >= 30000 }

// units is the number of generation units of a table: rows of the table
// itself, except partsupp (per part) and lineitem (per order).
func (s scale) units(t Table) int64 {
	switch t {
	case Nation:
		return 25
	case Region:
		return 5
	case Part, PartSupp:
		return s.partRows()
	case Supplier:
		return s.suppRows()
	case Customer:
		return s.custRows()
	default:
		return s.orderRows()
	}
}

// RowCount returns the number of rows dbgen writes for table t at scale
// factor sf. For lineitem the count depends on the random number of lines
// per order, so it is computed by running that one stream over all orders
// (about 1.5 million cheap draws per unit of scale).
func RowCount(t Table, sf float64) (int64, error) {
	return RowCountContext(context.Background(), t, sf)
}

// RowCountContext is RowCount, stopping with ctx's error when ctx ends
// first (the lineitem count at a large scale runs for minutes).
func RowCountContext(ctx context.Context, t Table, sf float64) (int64, error) {
	s, err := newScale(sf)
	if err != nil {
		return 0, err
	}
	if t < 0 || t > Lineitem {
		return 0, fmt.Errorf("unknown table %d", int(t))
	}
	switch t {
	case PartSupp:
		return s.partRows() * suppPerPart, nil
	case Lineitem:
		return lineCount(ctx, s, 1, s.orderRows())
	}
	return s.units(t), nil
}

// lineCount sums the line counts of orders first..first+n-1.
func lineCount(ctx context.Context, s scale, first, n int64) (int64, error) {
	st := newStream(sdOLcnt)
	st.seekRow(first)
	var total int64
	for i := int64(0); i < n; i++ {
		if i&(1<<22-1) == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		total += st.unif(1, 7)
	}
	return total, nil
}
