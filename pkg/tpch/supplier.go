// The supplier table.

package tpch

type suppGen struct {
	addr, nation, phone, bal, cmnt, bbbCmnt, bbbType, bbbJnk, bbbOff stream
	scratch                                                          []byte
}

func newSuppGen(first int64) *suppGen {
	g := &suppGen{
		addr: newStream(sdSAddr), nation: newStream(sdSNtrg), phone: newStream(sdSPhne),
		bal: newStream(sdSAbal), cmnt: newStream(sdSCmnt), bbbCmnt: newStream(sdBbbCmnt),
		bbbType: newStream(sdBbbType), bbbJnk: newStream(sdBbbJnk), bbbOff: newStream(sdBbbOffst),
		scratch: make([]byte, 0, 256),
	}
	for _, s := range g.streams() {
		s.seekRow(first)
	}
	return g
}

func (g *suppGen) streams() []*stream {
	return []*stream{&g.addr, &g.nation, &g.phone, &g.bal, &g.cmnt, &g.bbbCmnt, &g.bbbType, &g.bbbJnk, &g.bbbOff}
}

const (
	bbbBase     = "Customer "
	bbbComplain = "Complaints"
	bbbCommend  = "Recommends"
	bbbLen      = 19 // len(bbbBase) + len(bbbComplain)
)

// genSupplier appends supplier rows first..first+n-1.
func (c *genCtx) genSupplier(w *rowBuf, first, n int64) {
	g := newSuppGen(first)
	var name [32]byte
	for key := first; key < first+n; key++ {
		w.int(key)
		w.str(appendPadded(append(name[:0], "Supplier#"...), key, 9))
		g.scratch = randomString(&g.addr, addrLen, g.scratch[:0])
		w.str(g.scratch)
		nation := g.nation.unif(0, nationsCount-1)
		w.int(nation)
		w.str(phone(name[:0], nation, &g.phone))
		w.money(g.bal.unif(-99999, 999999))

		// About ten suppliers per unit of scale get a "Customer ...
		// Complaints/Recommends" remark written into their comment; the
		// draws happen for every row so the streams stay aligned.
		cm := append(g.scratch[:0], c.text(&g.cmnt, suppCmnt)...)
		clen := int64(len(cm))
		bad := g.bbbCmnt.unif(1, 10000)
		typ := g.bbbType.unif(0, 100)
		noise := g.bbbJnk.unif(0, clen-bbbLen)
		off := g.bbbOff.unif(0, clen-(bbbLen+noise))
		if bad <= 10 {
			copy(cm[off:], bbbBase)
			if typ < 50 {
				copy(cm[off+int64(len(bbbBase))+noise:], bbbComplain)
			} else {
				copy(cm[off+int64(len(bbbBase))+noise:], bbbCommend)
			}
		}
		w.str(cm)
		w.endRow()
		for _, s := range g.streams() {
			s.nextRow()
		}
	}
}
