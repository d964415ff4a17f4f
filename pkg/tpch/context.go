// Shared read-only state of a generator and the helpers every table uses.

package tpch

// genCtx is everything row generation reads: the interpreted scale factor,
// the distributions and the text pool. It is never written after creation,
// so any number of goroutines may generate from it at once (pk64 has
// its own lock).
type genCtx struct {
	s    scale
	ds   *distSet
	pool *textPool
	pk64 *pk64Cache // only used from scale 30000 on
}

// Comment and string length ranges: dbgen's average lengths times 0.4 and
// 1.6 (V_STR_LOW, V_STR_HGH), truncated, computed in floating point as
// dbgen does.
type lenRange struct{ lo, hi int64 }

func strRange(avg int) lenRange {
	a := float64(avg)
	return lenRange{int64(a * 0.4), int64(a * 1.6)}
}

var (
	nationCmnt   = strRange(72)
	regionCmnt   = strRange(72)
	partCmnt     = strRange(14)
	suppCmnt     = strRange(63)
	psCmnt       = strRange(124)
	custCmnt     = strRange(73)
	orderCmnt    = strRange(49)
	lineCmnt     = strRange(27)
	addrLen      = strRange(25)
	nationsCount = int64(25)
)

// text cuts a comment out of the pool: a random offset, then a random
// length (dbgen's dbg_text).
func (c *genCtx) text(st *stream, r lenRange) []byte {
	off := st.unif(0, textPoolSize-r.hi)
	n := st.unif(r.lo, r.hi)
	return c.pool.slice(off, n)
}

const alphaNum = "0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ,"

// randomString is dbgen's a_rnd: a random length, then characters taken
// six bits at a time from one draw per five characters.
func randomString(st *stream, r lenRange, dst []byte) []byte {
	n := st.unif(r.lo, r.hi)
	var bits int64
	for i := int64(0); i < n; i++ {
		if i%5 == 0 {
			bits = st.unifMaxLong()
		}
		dst = append(dst, alphaNum[bits&63])
		bits >>= 6
	}
	return dst
}

// phone appends a phone number "CC-AAA-EEE-NNNN" whose country code is
// derived from the nation key.
func phone(b []byte, nation int64, st *stream) []byte {
	area := st.unif(100, 999)
	exch := st.unif(100, 999)
	num := st.unif(1000, 9999)
	b = appendInt(b, 10+nation%90)
	b = append(b, '-')
	b = appendInt(b, area)
	b = append(b, '-')
	b = appendInt(b, exch)
	b = append(b, '-')
	return appendInt(b, num)
}

// retailPrice is p_retailprice in cents, a function of the part key only.
func retailPrice(p int64) int64 {
	return 90000 + (p/10)%20001 + (p%1000)*100
}

// partSupp returns the key of supplier i (0..3) of part p; the formula
// spreads each part's suppliers evenly over the supplier table.
func partSupp(p, i, suppliers int64) int64 {
	return (p+i*(suppliers/suppPerPart+(p-1)/suppliers))%suppliers + 1
}
