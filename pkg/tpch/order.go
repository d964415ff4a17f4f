// The orders and lineitem tables, generated together as dbgen does.

package tpch

import (
	"context"
	"sync"
)

// orderGen holds the streams of orders and their line items.
type orderGen struct {
	ckey, odate, prio, clerk, cmnt, lcnt                                       stream
	qty, dcnt, tax, ship, smode, lcmnt, pkey, skey, sdate, cdate, rdate, rflag stream
}

func (g *orderGen) orderStreams() []*stream {
	return []*stream{&g.ckey, &g.odate, &g.prio, &g.clerk, &g.cmnt, &g.lcnt}
}

func (g *orderGen) lineStreams() []*stream {
	return []*stream{&g.qty, &g.dcnt, &g.tax, &g.ship, &g.smode, &g.lcmnt, &g.pkey, &g.skey, &g.sdate, &g.cdate, &g.rdate, &g.rflag}
}

// orderKey spreads order numbers over the key space: of every 32 keys only
// the first 8 are used (dbgen's mk_sparse with sequence 0).
func orderKey(i int64) int64 {
	return (i>>3)<<5 | i&7
}

// lineItem is one generated line, kept until the order's status is known.
type lineItem struct {
	partkey, suppkey, qty, eprice, dcnt, tax int64
	sdate, cdate, rdate                      int64
	rflag, status                            byte
	ship, smode                              string
	cmnt                                     []byte
}

// genOrders appends orders first..first+n-1 to ow and their line items to
// lw; either may be nil. Streams only the skipped table needs are not drawn:
// each row starts from its own skip-ahead position anyway.
func (c *genCtx) genOrders(ctx context.Context, ow, lw *rowBuf, first, n int64) {
	var g orderGen
	g.ckey, g.odate, g.prio, g.clerk, g.cmnt, g.lcnt = newStream(sdOCkey), newStream(sdOOdate),
		newStream(sdOPrio), newStream(sdOClrk), newStream(sdOCmnt), newStream(sdOLcnt)
	g.qty, g.dcnt, g.tax, g.ship, g.smode, g.lcmnt = newStream(sdLQty), newStream(sdLDcnt),
		newStream(sdLTax), newStream(sdLShip), newStream(sdLSmode), newStream(sdLCmnt)
	g.pkey, g.skey, g.sdate, g.cdate, g.rdate, g.rflag = newStream(sdLPkey), newStream(sdLSkey),
		newStream(sdLSdte), newStream(sdLCdte), newStream(sdLRdte), newStream(sdLRflg)
	ostreams, lstreams := g.orderStreams(), g.lineStreams()
	for _, s := range ostreams {
		s.seekRow(first)
	}
	for _, s := range lstreams {
		s.seekRow(first)
	}
	use64 := c.s.use64()
	if use64 {
		// From scale 30000 on dbgen draws o_custkey and l_partkey from a
		// 64-bit generator that its row bookkeeping does not align, so
		// these two streams are positioned by replaying earlier orders.
		ostreams = ostreams[1:] // ckey advances on its own
		g.ckey.seed = advance64(seeds[sdOCkey].value, first-1)
		var ok bool
		if g.pkey.seed, ok = c.pk64.seek(ctx, first); !ok {
			return // ctx ended during the replay
		}
	}
	ds := c.ds
	custMax := c.s.custRows()
	partMax := c.s.partRows()
	suppliers := c.s.suppRows()
	clerks := c.s.clerks()
	var lines [7]lineItem
	var scratch [32]byte
	aheadLcnt := newStream(sdOLcnt) // boundary 1: plain sequential draws
	aheadLcnt.seekRow(first + aheadRows)
	aheadO := newLookahead(sdOCmnt, first, orderCmnt)
	aheadL := newLookahead(sdLCmnt, first, lineCmnt)
	for i := first; i < first+n; i++ {
		if ow != nil {
			aheadO.row(c.pool, 1)
		}
		if nl := aheadLcnt.unif(1, 7); lw != nil {
			aheadL.row(c.pool, nl)
		}
		okey := orderKey(i)
		var custkey int64
		var prio string
		var clerk int64
		var ocmnt []byte
		if ow != nil {
			if use64 {
				custkey = g.ckey.unif64(1, custMax)
			} else {
				custkey = g.ckey.unif(1, custMax)
			}
			// A third of the customers never order: nudge keys that
			// are multiples of three to a neighbour.
			delta := int64(1)
			for custkey%3 == 0 {
				custkey += delta
				custkey = min(custkey, custMax)
				delta = -delta
			}
		}
		odate := g.odate.unif(0, orderDateMax)
		if ow != nil {
			prio = ds.oPrio.names[g.prio.pick(ds.oPrio)]
			clerk = g.clerk.unif(1, clerks)
			ocmnt = c.text(&g.cmnt, orderCmnt)
		}
		nlines := g.lcnt.unif(1, 7)
		var total int64
		shipped := int64(0)
		for l := int64(0); l < nlines; l++ {
			li := &lines[l]
			li.qty = g.qty.unif(1, 50)
			li.dcnt = g.dcnt.unif(0, 10)
			li.tax = g.tax.unif(0, 8)
			li.ship = ds.instruct.names[g.ship.pick(ds.instruct)]
			li.smode = ds.smode.names[g.smode.pick(ds.smode)]
			li.cmnt = c.text(&g.lcmnt, lineCmnt)
			if use64 {
				li.partkey = g.pkey.unif64(1, partMax)
			} else {
				li.partkey = g.pkey.unif(1, partMax)
			}
			li.suppkey = partSupp(li.partkey, g.skey.unif(0, 3), suppliers)
			li.eprice = retailPrice(li.partkey) * li.qty
			total += (li.eprice * (100 - li.dcnt) / 100) * (100 + li.tax) / 100
			li.sdate = odate + g.sdate.unif(1, 121)
			li.cdate = odate + g.cdate.unif(30, 90)
			li.rdate = li.sdate + g.rdate.unif(1, 30)
			if li.rdate <= currentDate {
				li.rflag = ds.rflag.names[g.rflag.pick(ds.rflag)][0]
			} else {
				li.rflag = 'N'
			}
			if li.sdate <= currentDate {
				shipped++
				li.status = 'F'
			} else {
				li.status = 'O'
			}
		}
		if ow != nil {
			status := byte('O')
			if shipped == nlines {
				status = 'F'
			} else if shipped > 0 {
				status = 'P'
			}
			w := ow
			w.int(okey)
			w.int(custkey)
			w.char(status)
			w.money(total)
			w.date(odate)
			w.strS(prio)
			w.str(appendPadded(append(scratch[:0], "Clerk#"...), clerk, 9))
			w.int(0)
			w.str(ocmnt)
			w.endRow()
		}
		if lw != nil {
			w := lw
			for l := int64(0); l < nlines; l++ {
				li := &lines[l]
				w.int(okey)
				w.int(li.partkey)
				w.int(li.suppkey)
				w.int(l + 1)
				w.int(li.qty)
				w.money(li.eprice)
				w.money(li.dcnt)
				w.money(li.tax)
				w.char(li.rflag)
				w.char(li.status)
				w.date(li.sdate)
				w.date(li.cdate)
				w.date(li.rdate)
				w.strS(li.ship)
				w.strS(li.smode)
				w.str(li.cmnt)
				w.endRow()
			}
		}
		for _, s := range ostreams {
			s.nextRow()
		}
		if use64 {
			// dbgen pads l_partkey's 64-bit stream with its 31-bit
			// skip routine; mimic it so the following orders match.
			pk := padNth(g.pkey.seed, 7-nlines)
			for _, s := range lstreams {
				s.nextRow()
			}
			g.pkey.seed = pk
			g.pkey.rowStart = pk
			if i == first+n-1 {
				c.pk64.store(i+1, pk)
			}
		} else {
			for _, s := range lstreams {
				s.nextRow()
			}
		}
	}
}

// pk64Cache remembers l_partkey's 64-bit stream state at the ends of
// recently generated blocks. In 64-bit mode that state cannot be computed
// by a jump (each order takes one 64-bit step per line and dbgen then pads
// the unused draws with its 31-bit skip routine), so a block replays the
// orders since the nearest checkpoint before it.
type pk64Cache struct {
	mu    sync.Mutex
	state map[int64]int64 // order number -> state before that order
}

const pk64Keep = 256

func (c *pk64Cache) store(order, v int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == nil {
		c.state = make(map[int64]int64)
	}
	if len(c.state) >= pk64Keep {
		// forget the oldest checkpoints
		lo := order
		for k := range c.state {
			lo = min(lo, k)
		}
		delete(c.state, lo)
	}
	c.state[order] = v
}

// seek returns the state at the start of order r; ok is false when ctx
// ended first (far into a scale the replay can take minutes).
func (c *pk64Cache) seek(ctx context.Context, r int64) (state int64, ok bool) {
	from, v := int64(1), seeds[sdLPkey].value
	c.mu.Lock()
	for k, s := range c.state {
		if k <= r && k > from {
			from, v = k, s
		}
	}
	c.mu.Unlock()
	lc := newStream(sdOLcnt)
	lc.seekRow(from)
	for i := from; i < r; i++ {
		if (i-from)&(1<<20-1) == 0 && ctx.Err() != nil {
			return 0, false
		}
		n := lc.unif(1, 7)
		v = advance64(v, n)
		v = padNth(v, 7-n)
	}
	return v, true
}
