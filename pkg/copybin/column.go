// Columns: what the decoder must know about each field of a COPY stream.

package copybin

import (
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"
)

// Column describes one field of a COPY BINARY stream, as found in the
// PostgreSQL catalog.
type Column struct {
	// Name is the column name, used for DDL and in error messages.
	Name string
	// TypeOID is the PostgreSQL type OID of the field as sent (a domain must
	// be resolved to its base type; LookupColumns does this).
	TypeOID uint32
	// TypMod is the type modifier (atttypmod), -1 when none.
	TypMod int32
	// Type is the format_type() text, used in error messages.
	Type string
	// NotNull mirrors attnotnull; it becomes NOT NULL in DuckDB.
	NotNull bool
	// ElemOID is, for an array of enums or of a domain (TypeOID then being
	// text[] or the base type's array), the element type OID the server
	// writes into each array value: the enum's or the domain's own. Zero
	// otherwise. LookupColumns sets it.
	ElemOID uint32
	// AsText says the reader selects this column cast to text (see
	// SelectExpr), so it is decoded as text and stored as VARCHAR. It is the
	// explicit, lossless way to copy types that have no exact DuckDB
	// counterpart (unconstrained numeric, inet, money, ...).
	AsText bool
}

// SelectExpr is the expression a reader should put in its COPY query for the
// column: the quoted name, cast to text when AsText is set.
func (c Column) SelectExpr() string {
	if c.AsText {
		return QuoteIdent(c.Name) + "::text"
	}
	return QuoteIdent(c.Name)
}

// QuoteIdent quotes an identifier the way both PostgreSQL and DuckDB accept.
func QuoteIdent(s string) string {
	out := make([]byte, 0, len(s)+2)
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			out = append(out, '"')
		}
		out = append(out, s[i])
	}
	return string(append(out, '"'))
}

// arrayElem maps the array types of the supported scalars to their element
// type.
var arrayElem = map[uint32]uint32{
	1000: pgtype.BoolOID, 1001: pgtype.ByteaOID, 1002: pgtype.QCharOID, 1003: pgtype.NameOID, 1016: pgtype.Int8OID,
	1005: pgtype.Int2OID, 1007: pgtype.Int4OID, 1009: pgtype.TextOID, 1028: pgtype.OIDOID, 199: pgtype.JSONOID,
	1021: pgtype.Float4OID, 1022: pgtype.Float8OID, 1014: pgtype.BPCharOID, 1015: pgtype.VarcharOID,
	1182: pgtype.DateOID, 1183: pgtype.TimeOID, 1115: pgtype.TimestampOID, 1185: pgtype.TimestamptzOID,
	1187: pgtype.IntervalOID, 1231: pgtype.NumericOID, 2951: pgtype.UUIDOID, 3807: pgtype.JSONBOID,
	// Off the hand path (see rare.go), and the small scalars beside it.
	1011: pgtype.XIDOID, 1012: pgtype.CIDOID, 271: pgtype.XID8OID, 791: moneyOID, 1270: pgtype.TimetzOID,
	143: pgtype.XMLOID, 1041: pgtype.InetOID, 651: pgtype.CIDROID, 1040: pgtype.MacaddrOID, 775: pgtype.Macaddr8OID,
	1017: pgtype.PointOID, 629: pgtype.LineOID, 1018: pgtype.LsegOID, 1020: pgtype.BoxOID, 1019: pgtype.PathOID,
	1027: pgtype.PolygonOID, 719: pgtype.CircleOID, 1561: pgtype.BitOID, 1563: pgtype.VarbitOID,
	3905: pgtype.Int4rangeOID, 3927: pgtype.Int8rangeOID, 3907: pgtype.NumrangeOID, 3913: pgtype.DaterangeOID,
	3909: pgtype.TsrangeOID, 3911: pgtype.TstzrangeOID, 6150: pgtype.Int4multirangeOID, 6157: pgtype.Int8multirangeOID,
	6151: pgtype.NummultirangeOID, 6155: pgtype.DatemultirangeOID, 6152: pgtype.TsmultirangeOID,
	6153: pgtype.TstzmultirangeOID, 1010: pgtype.TIDOID, 3643: pgtype.TSVectorOID, 3645: tsqueryOID,
	3221: pgLSNOID, 4073: pgtype.JSONPathOID,
}

// ArrayElem gives the element type of an array type the decoder reads as
// a DuckDB list; ok is false for any other type.
func ArrayElem(oid uint32) (elem uint32, ok bool) {
	elem, ok = arrayElem[oid]
	return elem, ok
}

// Kind is how a field is decoded and where its values live in a Vector.
type Kind uint8

// The kinds. The comment says which Vector slice holds the values.
const (
	KindInvalid     Kind = iota
	KindBool             // Bool
	KindInt16            // Int
	KindInt32            // Int
	KindInt64            // Int (also oid, as an unsigned 32-bit value)
	KindFloat32          // Float (exactly the float4 value)
	KindFloat64          // Float
	KindDecimal          // Int, scaled by 10^Scale; Hi too when Precision > 18 (Int is then the low 64 bits)
	KindText             // Data/Off (char(n): trailing spaces removed)
	KindJSON             // Data/Off (json text; jsonb as its text form)
	KindBytes            // Data/Off
	KindUUID             // Data/Off, 16 bytes each
	KindDate             // Int: days since 1970-01-01; ±infinity as ±math.MaxInt32
	KindTime             // Int: microseconds since midnight
	KindTimestamp        // Int: microseconds since 1970-01-01; ±infinity as ±math.MaxInt64
	KindTimestampTZ      // Int: as KindTimestamp, in UTC
	KindInterval         // Int: microseconds; Hi: months<<32 | uint32(days)
	KindList             // ListOff into Elem
	KindUint64           // Int, holding the bits of an unsigned 64-bit value (xid8)
	KindTimeTZ           // Int: microseconds since midnight (local time); Hi: UTC offset in seconds east

	// kindConv is never a Vector's kind: decodeValue hands such values to
	// the plan's conv.
	kindConv Kind = 255
)

var kindNames = [...]string{"invalid", "bool", "int16", "int32", "int64", "float32", "float64",
	"decimal", "text", "json", "bytes", "uuid", "date", "time", "timestamp", "timestamptz", "interval", "list",
	"uint64", "timetz"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// scalarKind gives the kind of a non-array type OID.
func scalarKind(oid uint32) Kind {
	switch oid {
	case pgtype.BoolOID:
		return KindBool
	case pgtype.Int2OID:
		return KindInt16
	case pgtype.Int4OID:
		return KindInt32
	case pgtype.Int8OID, pgtype.OIDOID, pgtype.XIDOID, pgtype.CIDOID:
		return KindInt64
	case pgtype.XID8OID:
		return KindUint64
	case pgtype.Float4OID:
		return KindFloat32
	case pgtype.Float8OID:
		return KindFloat64
	case pgtype.NumericOID, moneyOID:
		return KindDecimal
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID, pgtype.QCharOID, pgtype.XMLOID:
		return KindText
	case pgtype.JSONOID, pgtype.JSONBOID:
		return KindJSON
	case pgtype.ByteaOID:
		return KindBytes
	case pgtype.UUIDOID:
		return KindUUID
	case pgtype.DateOID:
		return KindDate
	case pgtype.TimeOID:
		return KindTime
	case pgtype.TimestampOID:
		return KindTimestamp
	case pgtype.TimestamptzOID:
		return KindTimestampTZ
	case pgtype.IntervalOID:
		return KindInterval
	case pgtype.TimetzOID:
		return KindTimeTZ
	}
	if _, ok := rareTypes[oid]; ok {
		return KindText
	}
	return KindInvalid
}

// numericTypmod splits a numeric type modifier into precision and scale;
// ok is false for unconstrained numeric. PostgreSQL 15 allows a negative
// scale and a scale above the precision.
func numericTypmod(typmod int32) (prec, scale int, ok bool) {
	if typmod < 4 {
		return 0, 0, false
	}
	v := typmod - 4
	prec = int(v>>16) & 0xffff
	scale = int((v&0x7ff)^0x400) - 0x400 // sign-extend 11 bits
	return prec, scale, true
}

// decimalShape is the DuckDB DECIMAL(width, scale) that holds every value of
// numeric(prec, scale) exactly: a negative scale widens the integer part, a
// scale above the precision widens the width. A money column (or money[])
// is DECIMAL(19, s), s being the scale LookupColumns put in its TypMod.
func decimalShape(c Column) (width, scale int, err error) {
	if c.TypeOID == moneyOID || c.TypeOID == moneyArrayOID {
		_, s, ok := numericTypmod(c.TypMod)
		if !ok || s < 0 || s > 10 {
			return 0, 0, fmt.Errorf("column %s: %s needs the scale of the session's lc_monetary in its TypMod (LookupColumns sets it)", QuoteIdent(c.Name), typeText(c))
		}
		return moneyDigits, s, nil
	}
	prec, s, ok := numericTypmod(c.TypMod)
	if !ok {
		return 0, 0, fmt.Errorf("column %s: unconstrained %s has no exact DuckDB type (DECIMAL holds at most 38 digits at a fixed scale); give it a precision and scale, or copy it as text (Column.AsText)", QuoteIdent(c.Name), typeText(c))
	}
	width, scale = prec, s
	if s < 0 {
		width, scale = prec-s, 0
	}
	if scale > width {
		width = scale
	}
	if width > 38 {
		return 0, 0, fmt.Errorf("column %s: %s needs %d digits, more than DuckDB DECIMAL's 38; copy it as text (Column.AsText)", QuoteIdent(c.Name), typeText(c), width)
	}
	return width, scale, nil
}

func typeText(c Column) string {
	if c.Type != "" {
		return c.Type
	}
	return fmt.Sprintf("type oid %d", c.TypeOID)
}

// plan is the decoding plan for one column.
type plan struct {
	kind    Kind
	elem    Kind   // element kind of a list
	elemOID uint32 // element type OID in a list's values
	bpchar  bool   // strip trailing spaces
	jsonb   bool   // skip the version byte
	oid     bool   // unsigned 32-bit (oid, xid, cid)
	char1   bool   // "char": one raw byte
	prec    int    // decimal width
	scale   int    // decimal scale
	pgScale int    // scale of the PostgreSQL values (may be negative)
	// valueOID is the type of the values (the element type of a list).
	valueOID uint32
	// conv decodes values off the hand path (money and the types in
	// rareTypes); NewDecoder sets it, one per decoder, and then sets decode
	// (or elemDecode for a list) to kindConv.
	conv conv
	// decode and elemDecode are the kinds decodeValue switches on for the
	// column's and a list's element values: kind and elem, or kindConv.
	decode, elemDecode Kind
}

// planFor checks that the column can be decoded and says how.
func planFor(c Column) (plan, error) {
	if c.AsText {
		return plan{kind: KindText, decode: KindText}, nil
	}
	oid := c.TypeOID
	var p plan
	if e, ok := arrayElem[oid]; ok {
		p.kind = KindList
		p.elemOID = e
		if c.ElemOID != 0 {
			p.elemOID = c.ElemOID
		}
		p.elem = scalarKind(e)
		oid = e
	} else {
		p.kind = scalarKind(oid)
		if p.kind == KindInvalid {
			return p, fmt.Errorf("column %s: PostgreSQL type %s is not supported; copy it as text (Column.AsText) or leave the column out", QuoteIdent(c.Name), typeText(c))
		}
	}
	p.valueOID = oid
	p.decode, p.elemDecode = p.kind, p.elem
	p.bpchar = oid == pgtype.BPCharOID
	p.jsonb = oid == pgtype.JSONBOID
	p.oid = oid == pgtype.OIDOID || oid == pgtype.XIDOID || oid == pgtype.CIDOID
	p.char1 = oid == pgtype.QCharOID
	if oid == pgtype.NumericOID || oid == moneyOID {
		w, s, err := decimalShape(c)
		if err != nil {
			return p, err
		}
		p.prec, p.scale = w, s
		_, p.pgScale, _ = numericTypmod(c.TypMod)
	}
	return p, nil
}

// DecimalShape is the DuckDB DECIMAL(width, scale) of a numeric column.
func (c Column) DecimalShape() (width, scale int, err error) { return decimalShape(c) }

// Kind is how the decoder stores the column; for arrays elem is the element
// kind. It fails for unsupported types.
func (c Column) Kind() (kind, elem Kind, err error) {
	p, err := planFor(c)
	return p.kind, p.elem, err
}
