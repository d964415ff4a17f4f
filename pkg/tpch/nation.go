// The nation and region tables.

package tpch

// genNation appends nation rows first..first+n-1 (1-based).
func (c *genCtx) genNation(w *rowBuf, first, n int64) {
	st := newStream(sdNCmnt)
	st.seekRow(first)
	for i := first; i < first+n; i++ {
		w.int(i - 1)
		w.strS(c.ds.nations.names[i-1])
		// The weight column of the nations list holds the region key,
		// stored cumulatively like every dbgen weight.
		w.int(c.ds.nations.cum[i-1])
		w.str(c.text(&st, nationCmnt))
		w.endRow()
		st.nextRow()
	}
}

// genRegion appends region rows first..first+n-1 (1-based).
func (c *genCtx) genRegion(w *rowBuf, first, n int64) {
	st := newStream(sdRCmnt)
	st.seekRow(first)
	for i := first; i < first+n; i++ {
		w.int(i - 1)
		w.strS(c.ds.regions.names[i-1])
		w.str(c.text(&st, regionCmnt))
		w.endRow()
		st.nextRow()
	}
}
