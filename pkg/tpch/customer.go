// The customer table.

package tpch

// genCustomer appends customer rows first..first+n-1.
func (c *genCtx) genCustomer(w *rowBuf, first, n int64) {
	addr, nation, ph, bal, seg, cmnt := newStream(sdCAddr), newStream(sdCNtrg), newStream(sdCPhne),
		newStream(sdCAbal), newStream(sdCMseg), newStream(sdCCmnt)
	all := []*stream{&addr, &nation, &ph, &bal, &seg, &cmnt}
	for _, s := range all {
		s.seekRow(first)
	}
	scratch := make([]byte, 0, 64)
	ahead := newLookahead(sdCCmnt, first, custCmnt)
	for key := first; key < first+n; key++ {
		ahead.row(c.pool, 1)
		w.int(key)
		w.str(appendPadded(append(scratch[:0], "Customer#"...), key, 9))
		scratch = randomString(&addr, addrLen, scratch[:0])
		w.str(scratch)
		nk := nation.unif(0, nationsCount-1)
		w.int(nk)
		w.str(phone(scratch[:0], nk, &ph))
		w.money(bal.unif(-99999, 999999))
		w.strS(c.ds.mseg.names[seg.pick(c.ds.mseg)])
		w.str(c.text(&cmnt, custCmnt))
		w.endRow()
		for _, s := range all {
			s.nextRow()
		}
	}
}
