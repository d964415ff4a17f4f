// The part and partsupp tables, generated together as dbgen does.

package tpch

// partNameWords is how many colours make up p_name.
const partNameWords = 5

// genPart appends part rows and/or their partsupp rows (either writer may
// be nil) for parts first..first+n-1.
func (c *genCtx) genPart(pw, psw *rowBuf, first, n int64) {
	mfg, brnd, typ, size, cntr, cmnt, name := newStream(sdPMfg), newStream(sdPBrnd), newStream(sdPType),
		newStream(sdPSize), newStream(sdPCntr), newStream(sdPCmnt), newStream(sdPName)
	qty, cost, pscmnt := newStream(sdPsQty), newStream(sdPsScst), newStream(sdPsCmnt)
	partStreams := []*stream{&mfg, &brnd, &typ, &size, &cntr, &cmnt, &name}
	psStreams := []*stream{&qty, &cost, &pscmnt}
	for _, s := range partStreams {
		s.seekRow(first)
	}
	for _, s := range psStreams {
		s.seekRow(first)
	}
	colors := c.ds.colors
	ncolors := int64(len(colors.names))
	perm := make([]int64, ncolors)
	scratch := make([]byte, 0, 128)
	suppliers := c.s.suppRows()
	aheadP := newLookahead(sdPCmnt, first, partCmnt)
	aheadPS := newLookahead(sdPsCmnt, first, psCmnt)
	for key := first; key < first+n; key++ {
		if pw != nil {
			aheadP.row(c.pool, 1)
		}
		if psw != nil {
			aheadPS.row(c.pool, suppPerPart)
		}
		if pw != nil {
			// p_name: dbgen shuffles all 92 colours and joins the first
			// five. Later swaps never touch the first five slots, so only
			// five draws are needed; nextRow skips the rest.
			for i := range perm {
				perm[i] = int64(i)
			}
			scratch = scratch[:0]
			for i := int64(0); i < partNameWords; i++ {
				j := name.unif(i, ncolors-1)
				perm[i], perm[j] = perm[j], perm[i]
				if i > 0 {
					scratch = append(scratch, ' ')
				}
				scratch = append(scratch, colors.names[perm[i]]...)
			}
			w := pw
			w.int(key)
			w.str(scratch)
			m := mfg.unif(1, 5)
			scratch = append(append(scratch[:0], "Manufacturer#"...), byte('0'+m))
			w.str(scratch)
			b := brnd.unif(1, 5)
			scratch = append(append(scratch[:0], "Brand#"...), byte('0'+m), byte('0'+b))
			w.str(scratch)
			w.strS(c.ds.pTypes.names[typ.pick(c.ds.pTypes)])
			w.int(size.unif(1, 50))
			w.strS(c.ds.pCntr.names[cntr.pick(c.ds.pCntr)])
			w.money(retailPrice(key))
			w.str(c.text(&cmnt, partCmnt))
			w.endRow()
			for _, s := range partStreams {
				s.nextRow()
			}
		}
		if psw != nil {
			for i := int64(0); i < suppPerPart; i++ {
				w := psw
				w.int(key)
				w.int(partSupp(key, i, suppliers))
				w.int(qty.unif(1, 9999))
				w.money(cost.unif(100, 100000))
				w.str(c.text(&pscmnt, psCmnt))
				w.endRow()
			}
			for _, s := range psStreams {
				s.nextRow()
			}
		}
	}
}
