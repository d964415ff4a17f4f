// Types off the hand path: decoded per value with pgx's pgtype (or, where
// pgtype has no codec, a small decoder here) and stored as PostgreSQL's text.

package copybin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// Types pgtype has no constant for.
const (
	moneyOID      = 790
	moneyArrayOID = 791
	tsqueryOID    = 3615
	pgLSNOID      = 3220
	// moneyDigits is the width of DECIMAL(19, s), which holds every money
	// value: money is an int64 count of the currency's minor unit.
	moneyDigits = 19
)

// conv appends one non-NULL binary value to v, off the hand path. On error
// v is left part-way; the decoder stops anyway.
type conv func(v *Vector, b []byte) error

// textFunc appends the text PostgreSQL prints for one binary value (in a
// session with TextSettings) to dst.
type textFunc func(dst, b []byte) ([]byte, error)

// TextSettings are the session settings under which the text the decoder
// stores for types off the hand path equals PostgreSQL's own col::text:
// ISO dates, timestamptz in UTC ("+00"), floats in their shortest exact
// form (PostgreSQL 12's default). Only the text output depends on them,
// not the binary COPY, so a reader need not set them; a session that
// compares with col::text (snapshot's checksum) must.
const TextSettings = `SET DateStyle = 'ISO, MDY'; SET TimeZone = 'UTC'; SET extra_float_digits = 1; SET IntervalStyle = 'postgres'`

// rareTypes maps each type copied as its PostgreSQL text (DuckDB VARCHAR)
// to the maker of its text function. A maker runs once per decoder and
// column with the decoder's own pgtype.Map (a Map is not safe for
// concurrent use), so the scan plan and scan target are made once, not per
// value.
var rareTypes = map[uint32]func(m *pgtype.Map) textFunc{
	pgtype.InetOID:    inetText(pgtype.InetOID, false),
	pgtype.CIDROID:    inetText(pgtype.CIDROID, true),
	pgtype.MacaddrOID: macText(pgtype.MacaddrOID, 6),
	// pgtype decodes macaddr8 with the macaddr codec, which takes any length.
	pgtype.Macaddr8OID: macText(pgtype.Macaddr8OID, 8),
	pgtype.PointOID: scanned(pgtype.PointOID, func(dst []byte, v *pgtype.Point) ([]byte, error) {
		return appendPoint(dst, v.P), nil
	}),
	pgtype.LineOID: scanned(pgtype.LineOID, func(dst []byte, v *pgtype.Line) ([]byte, error) {
		dst = append(dst, '{')
		dst = appendFloat8(dst, v.A)
		dst = append(dst, ',')
		dst = appendFloat8(dst, v.B)
		dst = append(dst, ',')
		dst = appendFloat8(dst, v.C)
		return append(dst, '}'), nil
	}),
	pgtype.LsegOID: scanned(pgtype.LsegOID, func(dst []byte, v *pgtype.Lseg) ([]byte, error) {
		return appendPoints(dst, '[', v.P[:], ']'), nil
	}),
	pgtype.BoxOID: scanned(pgtype.BoxOID, func(dst []byte, v *pgtype.Box) ([]byte, error) {
		return appendPoints(dst, 0, v.P[:], 0), nil
	}),
	pgtype.PathOID: scanned(pgtype.PathOID, func(dst []byte, v *pgtype.Path) ([]byte, error) {
		if v.Closed {
			return appendPoints(dst, '(', v.P, ')'), nil
		}
		return appendPoints(dst, '[', v.P, ']'), nil
	}),
	pgtype.PolygonOID: scanned(pgtype.PolygonOID, func(dst []byte, v *pgtype.Polygon) ([]byte, error) {
		return appendPoints(dst, '(', v.P, ')'), nil
	}),
	pgtype.CircleOID: scanned(pgtype.CircleOID, func(dst []byte, v *pgtype.Circle) ([]byte, error) {
		dst = append(dst, '<')
		dst = appendPoint(dst, v.P)
		dst = append(dst, ',')
		dst = appendFloat8(dst, v.R)
		return append(dst, '>'), nil
	}),
	pgtype.BitOID:    scanned(pgtype.BitOID, appendBits),
	pgtype.VarbitOID: scanned(pgtype.VarbitOID, appendBits),
	pgtype.TIDOID: scanned(pgtype.TIDOID, func(dst []byte, v *pgtype.TID) ([]byte, error) {
		dst = append(dst, '(')
		dst = strconv.AppendUint(dst, uint64(v.BlockNumber), 10)
		dst = append(dst, ',')
		dst = strconv.AppendUint(dst, uint64(v.OffsetNumber), 10)
		return append(dst, ')'), nil
	}),
	pgtype.TSVectorOID: scanned(pgtype.TSVectorOID, appendTSVector),
	tsqueryOID:         func(*pgtype.Map) textFunc { return appendTSQuery },
	pgLSNOID:           func(*pgtype.Map) textFunc { return appendLSN },
	pgtype.JSONPathOID: func(*pgtype.Map) textFunc { return appendJSONPath },

	pgtype.Int4rangeOID: rangeText(pgtype.Int4rangeOID, int4Text),
	pgtype.Int8rangeOID: rangeText(pgtype.Int8rangeOID, int8Text),
	pgtype.NumrangeOID:  rangeText(pgtype.NumrangeOID, numericText),
	pgtype.DaterangeOID: rangeText(pgtype.DaterangeOID, dateText),
	pgtype.TsrangeOID:   rangeText(pgtype.TsrangeOID, timestampText),
	pgtype.TstzrangeOID: rangeText(pgtype.TstzrangeOID, timestamptzText),

	pgtype.Int4multirangeOID: multirangeText(pgtype.Int4multirangeOID, int4Text),
	pgtype.Int8multirangeOID: multirangeText(pgtype.Int8multirangeOID, int8Text),
	pgtype.NummultirangeOID:  multirangeText(pgtype.NummultirangeOID, numericText),
	pgtype.DatemultirangeOID: multirangeText(pgtype.DatemultirangeOID, dateText),
	pgtype.TsmultirangeOID:   multirangeText(pgtype.TsmultirangeOID, timestampText),
	pgtype.TstzmultirangeOID: multirangeText(pgtype.TstzmultirangeOID, timestamptzText),
}

// newConv is the conversion of plan p's values when they are off the hand
// path, else nil; m gives the decoder's pgtype.Map, made on first use.
func newConv(p *plan, m func() *pgtype.Map) conv {
	if p.valueOID == moneyOID && p.kind != KindText {
		return appendMoney
	}
	mk, ok := rareTypes[p.valueOID]
	if !ok || (p.kind != KindText && p.elem != KindText) {
		return nil
	}
	f := mk(m())
	return func(v *Vector, b []byte) error {
		var err error
		if v.Data, err = f(v.Data, b); err != nil {
			return err
		}
		v.Off = append(v.Off, len(v.Data))
		return nil
	}
}

// appendMoney stores money's int64 (minor units) as DECIMAL(19, s): the
// same integer, read at the column's scale.
func appendMoney(v *Vector, b []byte) error {
	if len(b) != 8 {
		return sizeError(KindDecimal, len(b), 8)
	}
	x := int64(binary.BigEndian.Uint64(b))
	v.Int = append(v.Int, x)
	v.Hi = append(v.Hi, x>>63)
	return nil
}

// scanned makes a text function that scans the binary value into a T with
// pgtype and formats that.
func scanned[T any](oid uint32, format func(dst []byte, v *T) ([]byte, error)) func(*pgtype.Map) textFunc {
	return func(m *pgtype.Map) textFunc {
		v := new(T)
		sp := m.PlanScan(oid, pgtype.BinaryFormatCode, v)
		return func(dst, b []byte) ([]byte, error) {
			if err := sp.Scan(b, v); err != nil {
				return dst, err
			}
			return format(dst, v)
		}
	}
}

// inetText prints inet and cidr as network_out does: four decimal octets
// or PostgreSQL's IPv6 form, then /bits, which inet leaves out for a
// single host (/32, /128) and cidr always prints. pgtype's own text drops
// that distinction and prints IPv6 the Go way.
func inetText(oid uint32, cidr bool) func(*pgtype.Map) textFunc {
	return scanned(oid, func(dst []byte, p *netip.Prefix) ([]byte, error) {
		if !p.IsValid() {
			return dst, errors.New("inet: mask length beyond the address")
		}
		a, bits := p.Addr(), p.Bits()
		if a.Is4() {
			for i, x := range a.As4() {
				if i > 0 {
					dst = append(dst, '.')
				}
				dst = strconv.AppendUint(dst, uint64(x), 10)
			}
		} else {
			dst = appendIPv6(dst, a.As16())
		}
		if cidr || bits != a.BitLen() {
			dst = append(dst, '/')
			dst = strconv.AppendInt(dst, int64(bits), 10)
		}
		return dst, nil
	})
}

// appendIPv6 follows PostgreSQL's inet_net_ntop_ipv6: the longest run of
// two or more zero words becomes "::", and an address that starts with six
// zero words, or five and ffff, ends in dotted IPv4 (so ::1.2.3.4 stays
// that, where Go would print ::102:304).
func appendIPv6(dst []byte, a [16]byte) []byte {
	var w [8]uint16
	for i := range w {
		w[i] = binary.BigEndian.Uint16(a[2*i:])
	}
	type run struct{ base, n int }
	best, cur := run{-1, 0}, run{-1, 0}
	for i, x := range w {
		switch {
		case x == 0 && cur.base == -1:
			cur = run{i, 1}
		case x == 0:
			cur.n++
		case cur.base != -1:
			if best.base == -1 || cur.n > best.n {
				best = cur
			}
			cur.base = -1
		}
	}
	if cur.base != -1 && (best.base == -1 || cur.n > best.n) {
		best = cur
	}
	if best.base != -1 && best.n < 2 {
		best.base = -1
	}
	for i := 0; i < 8; i++ {
		if best.base != -1 && i >= best.base && i < best.base+best.n {
			if i == best.base {
				dst = append(dst, ':')
			}
			continue
		}
		if i != 0 {
			dst = append(dst, ':')
		}
		if i == 6 && best.base == 0 && (best.n == 6 || (best.n == 7 && w[7] != 1) || (best.n == 5 && w[5] == 0xffff)) {
			for j, x := range a[12:] {
				if j > 0 {
					dst = append(dst, '.')
				}
				dst = strconv.AppendUint(dst, uint64(x), 10)
			}
			break
		}
		dst = strconv.AppendUint(dst, uint64(w[i]), 16)
	}
	if best.base != -1 && best.base+best.n == 8 {
		dst = append(dst, ':')
	}
	return dst
}

// macText prints a macaddr (6 bytes) or macaddr8 (8 bytes) as lower-case
// hex pairs joined by colons.
func macText(oid uint32, size int) func(*pgtype.Map) textFunc {
	return scanned(oid, func(dst []byte, v *net.HardwareAddr) ([]byte, error) {
		if len(*v) != size {
			return dst, fmt.Errorf("mac address of %d bytes, want %d", len(*v), size)
		}
		const hex = "0123456789abcdef"
		for i, x := range *v {
			if i > 0 {
				dst = append(dst, ':')
			}
			dst = append(dst, hex[x>>4], hex[x&15])
		}
		return dst, nil
	})
}

// appendFloat8 prints a double as float8out does with extra_float_digits
// above 0 (PostgreSQL 12's default): the shortest text that reads back
// exactly, fixed-point for decimal exponents -4 to 14, else d.ddde±XX.
// pgtype prints geometry with %f, which spells out 1e300 in full.
func appendFloat8(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0 && math.Signbit(f):
		return append(dst, "-0"...)
	case f == 0:
		return append(dst, '0')
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
	exp, neg, i := 0, false, len(dst)-1
	for ; dst[i] != 'e'; i-- {
	}
	for _, c := range dst[i+1:] {
		switch c {
		case '-':
			neg = true
		case '+':
		default:
			exp = exp*10 + int(c-'0')
		}
	}
	if neg {
		exp = -exp
	}
	if exp >= -4 && exp < 15 {
		return eToFixed(dst, start, i, exp)
	}
	if math.Abs(f) < 1<<53 || !onMidpoint(dst[start:], f) {
		return dst
	}
	// PostgreSQL's Ryu never takes a decimal lying exactly halfway to the
	// next double (acceptBounds is off), which Go does when the mantissa
	// is even; for doubles of 2^53 and above the shortest such decimal can
	// be a round integer. Take the shortest correctly rounded one inside.
	digits := i - start // mantissa digits and the point
	if dst[start] == '-' {
		digits--
	}
	for p := digits; p <= 17; p++ {
		dst = strconv.AppendFloat(dst[:start], f, 'e', p-1, 64)
		if g, err := strconv.ParseFloat(string(dst[start:]), 64); err == nil && g == f && !onMidpoint(dst[start:], f) {
			break
		}
	}
	return dst
}

// eToFixed rewrites the d.ddde±XX text at dst[start:] (its 'e' at index e)
// in fixed-point notation with the same digits, for -4 <= exp < 15.
func eToFixed(dst []byte, start, e, exp int) []byte {
	var buf [24]byte
	digits := buf[:0]
	neg := dst[start] == '-'
	for _, c := range dst[start:e] {
		if c >= '0' && c <= '9' {
			digits = append(digits, c)
		}
	}
	dst = dst[:start]
	if neg {
		dst = append(dst, '-')
	}
	if exp < 0 {
		dst = append(dst, '0', '.')
		for range -exp - 1 {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	if len(digits) <= exp+1 {
		dst = append(dst, digits...)
		for range exp + 1 - len(digits) {
			dst = append(dst, '0')
		}
		return dst
	}
	dst = append(dst, digits[:exp+1]...)
	dst = append(dst, '.')
	return append(dst, digits[exp+1:]...)
}

// onMidpoint reports whether the decimal s lies exactly halfway between f
// and the next double on its side.
func onMidpoint(s []byte, f float64) bool {
	r, ok := new(big.Rat).SetString(string(s))
	if !ok {
		return false
	}
	exact := new(big.Rat).SetFloat64(f)
	d := new(big.Rat).Sub(r, exact)
	if d.Sign() == 0 {
		return false
	}
	next := math.Nextafter(f, math.Inf(d.Sign()))
	if math.IsInf(next, 0) {
		return false
	}
	half := new(big.Rat).Sub(new(big.Rat).SetFloat64(next), exact)
	half.Quo(half, big.NewRat(2, 1))
	return d.Cmp(half) == 0
}

func appendPoint(dst []byte, p pgtype.Vec2) []byte {
	dst = append(dst, '(')
	dst = appendFloat8(dst, p.X)
	dst = append(dst, ',')
	dst = appendFloat8(dst, p.Y)
	return append(dst, ')')
}

// appendPoints prints points joined by commas between open and close
// (0: none), as path_encode does.
func appendPoints(dst []byte, open byte, ps []pgtype.Vec2, close byte) []byte {
	if open != 0 {
		dst = append(dst, open)
	}
	for i, p := range ps {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendPoint(dst, p)
	}
	if close != 0 {
		dst = append(dst, close)
	}
	return dst
}

func appendBits(dst []byte, v *pgtype.Bits) ([]byte, error) {
	for i := int32(0); i < v.Len; i++ {
		dst = append(dst, '0'+v.Bytes[i/8]>>(7-i%8)&1)
	}
	return dst, nil
}

// appendTSVector prints as tsvectorout: each lexeme in single quotes with '
// and \ doubled (pgtype escapes ' with a backslash), then :positions with
// weights A-C (D is not printed).
func appendTSVector(dst []byte, v *pgtype.TSVector) ([]byte, error) {
	for i, lx := range v.Lexemes {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = appendQuotedLexeme(dst, lx.Word)
		for j, p := range lx.Positions {
			if j == 0 {
				dst = append(dst, ':')
			} else {
				dst = append(dst, ',')
			}
			dst = strconv.AppendUint(dst, uint64(p.Position), 10)
			if p.Weight != pgtype.TSVectorWeightD {
				dst = append(dst, byte(p.Weight))
			}
		}
	}
	return dst, nil
}

func appendQuotedLexeme(dst []byte, s string) []byte {
	dst = append(dst, '\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' || s[i] == '\\' {
			dst = append(dst, s[i])
		}
		dst = append(dst, s[i])
	}
	return append(dst, '\'')
}

// tsquery items as tsquerysend sends them, in prefix order: an operator,
// then its right operand, then its left.
const (
	qiVal = 1
	qiOpr = 2

	opNot    = 1
	opAnd    = 2
	opOr     = 3
	opPhrase = 4

	// maxTSQueryDepth bounds the recursion on malformed input; PostgreSQL's
	// own stack limit stops far shallower queries.
	maxTSQueryDepth = 100000
)

// opPriority is tsearch_op_priority, by operator code.
var opPriority = [5]int{opNot: 4, opAnd: 2, opOr: 1, opPhrase: 3}

// appendTSQuery prints a tsquery as tsqueryout does (pgtype has no tsquery
// codec): operands quoted like tsvector lexemes with :*ABCD flags,
// operators with the parentheses their priorities need.
func appendTSQuery(dst, b []byte) ([]byte, error) {
	if len(b) < 4 {
		return dst, errors.New("tsquery: truncated")
	}
	n := binary.BigEndian.Uint32(b)
	q := tsq{b: b[4:]}
	if n == 0 {
		return dst, q.finish()
	}
	if n > uint32(len(q.b)) {
		return dst, fmt.Errorf("tsquery: %d items in %d bytes", n, len(q.b))
	}
	dst, err := q.infix(dst, -1, false, 0)
	if err != nil {
		return dst, err
	}
	if q.items != int(n) {
		return dst, fmt.Errorf("tsquery: %d items, header says %d", q.items, n)
	}
	return dst, q.finish()
}

type tsq struct {
	b     []byte
	items int
}

func (q *tsq) finish() error {
	if len(q.b) != 0 {
		return fmt.Errorf("tsquery: %d trailing bytes", len(q.b))
	}
	return nil
}

// infix is PostgreSQL's infix(): it prints the item at q.b and its
// operands, in parentheses when its priority is below the parent's or it
// is a phrase operator on the right of a phrase operator.
func (q *tsq) infix(dst []byte, parent int, rightPhrase bool, depth int) ([]byte, error) {
	if depth > maxTSQueryDepth {
		return dst, errors.New("tsquery: nested too deeply")
	}
	if len(q.b) < 2 {
		return dst, errors.New("tsquery: truncated item")
	}
	q.items++
	typ, b := q.b[0], q.b[1:]
	switch typ {
	case qiVal:
		if len(b) < 3 {
			return dst, errors.New("tsquery: truncated operand")
		}
		weight, prefix := b[0], b[1]
		end := 2
		for end < len(b) && b[end] != 0 {
			end++
		}
		if end == len(b) {
			return dst, errors.New("tsquery: operand without terminator")
		}
		if weight > 0xf {
			return dst, fmt.Errorf("tsquery: weight bitmap %#x", weight)
		}
		dst = appendQuotedLexeme(dst, string(b[2:end]))
		if weight != 0 || prefix != 0 {
			dst = append(dst, ':')
			if prefix != 0 {
				dst = append(dst, '*')
			}
			for i, c := range "ABCD" {
				if weight&(8>>i) != 0 {
					dst = append(dst, byte(c))
				}
			}
		}
		q.b = b[end+1:]
		return dst, nil
	case qiOpr:
	default:
		return dst, fmt.Errorf("tsquery: item type %d", typ)
	}
	op := b[0]
	q.b = b[1:]
	var distance int16
	switch op {
	case opNot:
		prio := opPriority[op]
		if prio < parent {
			dst = append(dst, "( "...)
		}
		dst = append(dst, '!')
		dst, err := q.infix(dst, prio, false, depth+1)
		if err != nil {
			return dst, err
		}
		if prio < parent {
			dst = append(dst, " )"...)
		}
		return dst, nil
	case opAnd, opOr:
	case opPhrase:
		if len(q.b) < 2 {
			return dst, errors.New("tsquery: truncated phrase distance")
		}
		distance = int16(binary.BigEndian.Uint16(q.b))
		q.b = q.b[2:]
	default:
		return dst, fmt.Errorf("tsquery: operator %d", op)
	}
	prio := opPriority[op]
	paren := prio < parent || (op == opPhrase && rightPhrase)
	if paren {
		dst = append(dst, "( "...)
	}
	// The right operand comes first; print it aside, then the left.
	right, err := q.infix(nil, prio, op == opPhrase, depth+1)
	if err != nil {
		return dst, err
	}
	if dst, err = q.infix(dst, prio, false, depth+1); err != nil {
		return dst, err
	}
	switch op {
	case opOr:
		dst = append(dst, " | "...)
	case opAnd:
		dst = append(dst, " & "...)
	default:
		if distance != 1 {
			dst = append(dst, " <"...)
			dst = strconv.AppendInt(dst, int64(distance), 10)
			dst = append(dst, "> "...)
		} else {
			dst = append(dst, " <-> "...)
		}
	}
	dst = append(dst, right...)
	if paren {
		dst = append(dst, " )"...)
	}
	return dst, nil
}

// appendLSN prints a pg_lsn as %X/%X (pgtype has no pg_lsn codec).
func appendLSN(dst, b []byte) ([]byte, error) {
	if len(b) != 8 {
		return dst, fmt.Errorf("pg_lsn field of %d bytes, want 8", len(b))
	}
	x := binary.BigEndian.Uint64(b)
	dst = appendUpperHex(dst, x>>32)
	dst = append(dst, '/')
	return appendUpperHex(dst, x&0xffffffff), nil
}

func appendUpperHex(dst []byte, x uint64) []byte {
	start := len(dst)
	dst = strconv.AppendUint(dst, x, 16)
	for i := start; i < len(dst); i++ {
		if c := dst[i]; c >= 'a' {
			dst[i] = c - 'a' + 'A'
		}
	}
	return dst
}

// appendJSONPath strips jsonpath's version byte; the rest is its text.
func appendJSONPath(dst, b []byte) ([]byte, error) {
	if len(b) == 0 || b[0] != 1 {
		return dst, errors.New("jsonpath: unknown binary version")
	}
	return append(dst, b[1:]...), nil
}

// rangeText prints a range as range_out does: "empty", or the bounds'
// texts (quoted when they need it) in [ or ( and ] or ). pgtype splits
// the range; elem prints each bound.
func rangeText(oid uint32, elem func(*pgtype.Map) textFunc) func(*pgtype.Map) textFunc {
	return func(m *pgtype.Map) textFunc {
		ef := elem(m)
		r := new(pgtype.Range[pgtype.UndecodedBytes])
		sp := m.PlanScan(oid, pgtype.BinaryFormatCode, r)
		var scratch []byte
		return func(dst, b []byte) ([]byte, error) {
			if err := sp.Scan(b, r); err != nil {
				return dst, err
			}
			var err error
			dst, scratch, err = appendRange(dst, r, ef, scratch)
			return dst, err
		}
	}
}

// multirangeText prints {range,range,...} (pgtype splits the multirange).
func multirangeText(oid uint32, elem func(*pgtype.Map) textFunc) func(*pgtype.Map) textFunc {
	return func(m *pgtype.Map) textFunc {
		ef := elem(m)
		mr := new(pgtype.Multirange[pgtype.Range[pgtype.UndecodedBytes]])
		sp := m.PlanScan(oid, pgtype.BinaryFormatCode, mr)
		var scratch []byte
		return func(dst, b []byte) ([]byte, error) {
			if err := sp.Scan(b, mr); err != nil {
				return dst, err
			}
			dst = append(dst, '{')
			for i := range *mr {
				if i > 0 {
					dst = append(dst, ',')
				}
				var err error
				if dst, scratch, err = appendRange(dst, &(*mr)[i], ef, scratch); err != nil {
					return dst, err
				}
			}
			return append(dst, '}'), nil
		}
	}
}

func appendRange(dst []byte, r *pgtype.Range[pgtype.UndecodedBytes], ef textFunc, scratch []byte) ([]byte, []byte, error) {
	if r.LowerType == pgtype.Empty {
		return append(dst, "empty"...), scratch, nil
	}
	if r.LowerType == pgtype.Inclusive {
		dst = append(dst, '[')
	} else {
		dst = append(dst, '(')
	}
	var err error
	if r.LowerType != pgtype.Unbounded {
		if scratch, err = ef(scratch[:0], r.Lower); err != nil {
			return dst, scratch, fmt.Errorf("range lower bound: %w", err)
		}
		dst = appendRangeBound(dst, scratch)
	}
	dst = append(dst, ',')
	if r.UpperType != pgtype.Unbounded {
		if scratch, err = ef(scratch[:0], r.Upper); err != nil {
			return dst, scratch, fmt.Errorf("range upper bound: %w", err)
		}
		dst = appendRangeBound(dst, scratch)
	}
	if r.UpperType == pgtype.Inclusive {
		dst = append(dst, ']')
	} else {
		dst = append(dst, ')')
	}
	return dst, scratch, nil
}

// appendRangeBound quotes a bound as range_bound_escape does: when it is
// empty or holds " \ ( ) [ ] , or white space, in double quotes with " and
// \ doubled. (pgtype does not quote white space, so a timestamp bound
// would differ.)
func appendRangeBound(dst, s []byte) []byte {
	quote := len(s) == 0
	for _, c := range s {
		switch c {
		case '"', '\\', '(', ')', '[', ']', ',', ' ', '\t', '\n', '\r', '\v', '\f':
			quote = true
		}
	}
	if !quote {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for _, c := range s {
		if c == '"' || c == '\\' {
			dst = append(dst, c)
		}
		dst = append(dst, c)
	}
	return append(dst, '"')
}

// Range elements.

func int4Text(m *pgtype.Map) textFunc {
	return scanned(pgtype.Int4OID, appendInt8)(m)
}

func int8Text(m *pgtype.Map) textFunc {
	return scanned(pgtype.Int8OID, appendInt8)(m)
}

func appendInt8(dst []byte, v *pgtype.Int8) ([]byte, error) {
	return strconv.AppendInt(dst, v.Int64, 10), nil
}

// numericText prints a numeric as numeric_out does, from the binary form
// itself: pgtype.Numeric forgets the display scale of a zero (0.00).
func numericText(*pgtype.Map) textFunc { return appendNumeric }

func appendNumeric(dst, b []byte) ([]byte, error) {
	if len(b) < 8 {
		return dst, errors.New("numeric: truncated header")
	}
	be := binary.BigEndian
	n, weight, sign, dscale := int(be.Uint16(b)), int(int16(be.Uint16(b[2:]))), be.Uint16(b[4:]), int(be.Uint16(b[6:]))
	switch sign {
	case 0xc000:
		return append(dst, "NaN"...), nil
	case 0xd000:
		return append(dst, "Infinity"...), nil
	case 0xf000:
		return append(dst, "-Infinity"...), nil
	case 0x4000:
		dst = append(dst, '-')
	case 0:
	default:
		return dst, fmt.Errorf("numeric: sign %#x", sign)
	}
	if len(b) != 8+2*n || dscale > 0x3fff {
		return dst, fmt.Errorf("numeric: %d bytes for %d digits (display scale %d)", len(b), n, dscale)
	}
	digit := func(i int) (int, error) {
		if i < 0 || i >= n {
			return 0, nil
		}
		d := int(be.Uint16(b[8+2*i:]))
		if d > 9999 {
			return 0, fmt.Errorf("numeric: digit %d", d)
		}
		return d, nil
	}
	if weight < 0 {
		dst = append(dst, '0')
	}
	for i := 0; i <= weight; i++ {
		d, err := digit(i)
		if err != nil {
			return dst, err
		}
		if i == 0 {
			dst = strconv.AppendInt(dst, int64(d), 10)
		} else {
			dst = appendPad(dst, d, 4)
		}
	}
	if dscale > 0 {
		dst = append(dst, '.')
		for i, left := weight+1, dscale; left > 0; i++ {
			d, err := digit(i)
			if err != nil {
				return dst, err
			}
			var four [4]byte
			for j := 3; j >= 0; j-- {
				four[j] = byte('0' + d%10)
				d /= 10
			}
			k := min(left, 4)
			dst = append(dst, four[:k]...)
			left -= k
		}
	}
	return dst, nil
}

func dateText(m *pgtype.Map) textFunc {
	return scanned(pgtype.DateOID, func(dst []byte, v *pgtype.Date) ([]byte, error) {
		switch v.InfinityModifier {
		case pgtype.Infinity:
			return append(dst, "infinity"...), nil
		case pgtype.NegativeInfinity:
			return append(dst, "-infinity"...), nil
		}
		dst, bc := appendYMD(dst, v.Time)
		if bc {
			dst = append(dst, " BC"...)
		}
		return dst, nil
	})(m)
}

func timestampText(m *pgtype.Map) textFunc {
	return scanned(pgtype.TimestampOID, func(dst []byte, v *pgtype.Timestamp) ([]byte, error) {
		return appendTimestamp(dst, v.Time, v.InfinityModifier, false), nil
	})(m)
}

// timestamptzText prints the instant in UTC, as PostgreSQL does with
// TimeZone UTC ("+00").
func timestamptzText(m *pgtype.Map) textFunc {
	return scanned(pgtype.TimestamptzOID, func(dst []byte, v *pgtype.Timestamptz) ([]byte, error) {
		return appendTimestamp(dst, v.Time.UTC(), v.InfinityModifier, true), nil
	})(m)
}

// appendTimestamp prints as EncodeDateTime with DateStyle ISO:
// YYYY-MM-DD HH:MM:SS[.ffffff without trailing zeros][+00][ BC].
func appendTimestamp(dst []byte, t time.Time, inf pgtype.InfinityModifier, tz bool) []byte {
	switch inf {
	case pgtype.Infinity:
		return append(dst, "infinity"...)
	case pgtype.NegativeInfinity:
		return append(dst, "-infinity"...)
	}
	dst, bc := appendYMD(dst, t)
	dst = append(dst, ' ')
	dst = appendPad(dst, t.Hour(), 2)
	dst = append(dst, ':')
	dst = appendPad(dst, t.Minute(), 2)
	dst = append(dst, ':')
	dst = appendPad(dst, t.Second(), 2)
	if us := t.Nanosecond() / 1000; us != 0 {
		dst = append(dst, '.')
		start := len(dst)
		dst = appendPad(dst, us, 6)
		for len(dst) > start && dst[len(dst)-1] == '0' {
			dst = dst[:len(dst)-1]
		}
	}
	if tz {
		dst = append(dst, "+00"...)
	}
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendYMD prints the date at least four digits to the year; years before
// 1 AD are printed as PostgreSQL counts them (year 0 is 1 BC) and bc says
// to add " BC".
func appendYMD(dst []byte, t time.Time) ([]byte, bool) {
	y := t.Year()
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	dst = appendPad(dst, y, 4)
	dst = append(dst, '-')
	dst = appendPad(dst, int(t.Month()), 2)
	dst = append(dst, '-')
	return appendPad(dst, t.Day(), 2), bc
}

// appendPad prints a non-negative x with at least width digits.
func appendPad(dst []byte, x, width int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], int64(x), 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}
