// The order-independent table checksum, computed identically by PostgreSQL
// and DuckDB.

package snapshot

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/qpkit/qpkit/pkg/copybin"
)

// The checksum of a table is the sum over its rows of the first 60 bits of
// md5(row text), as a decimal string; row order does not matter and the
// sum cannot overflow (numeric in PostgreSQL, HUGEINT in DuckDB). A row's
// text is, per column, "<bytes>:<text>" or "N" for NULL, joined by ",";
// the length prefix makes the encoding unambiguous. Each column's text is a
// canonical rendering both engines produce byte for byte:
//
//	integers, oid          decimal
//	numeric, decimal       decimal without trailing fractional zeros
//	float4, float8         %.16e of the float8 value (-0 as 0), nan, inf, -inf
//	boolean                1 or 0
//	bytea                  lower-case hex
//	char(n)                without trailing spaces
//	date                   days since 1970-01-01, or infinity/-infinity
//	time                   microseconds since midnight
//	timestamp(tz)          microseconds since the Unix epoch, or infinity/-infinity
//	interval               "<months> <days> <microseconds>"
//	text, varchar, uuid, json, jsonb, name, "char"   their text
//	xid, cid, xid8         decimal
//	money                  as numeric (money::numeric, at lc_monetary's scale)
//	timetz                 "<microseconds since midnight, local> <offset east in seconds>"
//	xml, inet, point, ranges, tsvector, ... (copybin stores PostgreSQL's
//	output function text)  that text: format('%s', col), which for inet and
//	                       cidr differs from ::text (that always adds /32)
//	                       and for xml too (::text keeps a default XML
//	                       declaration that the output drops)
//	columns copied as text (copybin.Column.AsText)   PostgreSQL's text output
//	arrays                 "[" + elements as fields, joined by "," + "]" (flattened)
//
// The PostgreSQL side must run with copybin.TextSettings (sessionSetup).
//
// renderers returns the PostgreSQL and the DuckDB expression for column c
// (an identifier already quoted as x); conv as for checksumQueries.
func renderers(c copybin.Column, x string, conv bool) (pg, duck string, err error) {
	if c.AsText { // copied as PostgreSQL's text output
		return x + "::text", "CAST(" + x + " AS VARCHAR)", nil
	}
	if elem, ok := copybin.ArrayElem(c.TypeOID); ok {
		ec := c
		ec.TypeOID = elem
		pe, de, err := renderers(ec, "qpa_e", conv)
		if err != nil {
			return "", "", err
		}
		return fmt.Sprintf("CASE WHEN %s IS NULL THEN NULL ELSE '[' || coalesce((SELECT string_agg(%s, ',' ORDER BY qpa_o) "+
				"FROM unnest(%[1]s) WITH ORDINALITY qpa_u(qpa_e, qpa_o)), '') || ']' END", x, pgField(pe, conv)),
			fmt.Sprintf("CASE WHEN %s IS NULL THEN NULL ELSE '[' || array_to_string(list_transform(%[1]s, lambda qpa_e: %s), ',') || ']' END",
				x, duckField(de)), nil
	}
	switch c.TypeOID {
	case pgtype.BoolOID:
		e := fmt.Sprintf("CASE WHEN %s THEN '1' WHEN NOT %[1]s THEN '0' END", x)
		return e, e, nil
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID, pgtype.OIDOID, pgtype.XIDOID, pgtype.CIDOID, pgtype.XID8OID:
		return x + "::text", "CAST(" + x + " AS VARCHAR)", nil
	case pgtype.NumericOID, moneyOID:
		// DuckDB prints a DECIMAL(w,w) without its leading zero (.1234,
		// -.0001, .0000): put it back, then trim as trim_scale does.
		d := fmt.Sprintf("regexp_replace(CAST(%s AS VARCHAR), '^(-?)\\.', '\\10.')", x)
		return "trim_scale(" + x + "::numeric)::text",
			fmt.Sprintf("CASE WHEN contains(%s, '.') THEN rtrim(rtrim(%[1]s, '0'), '.') ELSE %[1]s END", d), nil
	case pgtype.TimetzOID:
		return fmt.Sprintf("(extract(epoch from %s::time) * 1000000)::bigint::text || ' ' || extract(timezone from %[1]s)::int::text", x),
			fmt.Sprintf("CAST(date_diff('microsecond', TIME '00:00:00', CAST(%s AS TIME)) AS VARCHAR) || ' ' || CAST(date_part('timezone', %[1]s) AS VARCHAR)", x), nil
	case pgtype.Float4OID, pgtype.Float8OID:
		return fmt.Sprintf("CASE WHEN %s = 'NaN' THEN 'nan' WHEN %[1]s = 'Infinity' THEN 'inf' WHEN %[1]s = '-Infinity' THEN '-inf' "+
				"ELSE trim(to_char(%[1]s::float8 + 0, '9.9999999999999999EEEE')) END", x),
			fmt.Sprintf("CASE WHEN isnan(%s) THEN 'nan' WHEN isinf(%[1]s) AND %[1]s > 0 THEN 'inf' WHEN isinf(%[1]s) THEN '-inf' "+
				"ELSE printf('%%.16e', CAST(%[1]s AS DOUBLE) + 0) END", x), nil
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.NameOID, pgtype.QCharOID, pgtype.UUIDOID, pgtype.JSONOID, pgtype.JSONBOID:
		return x + "::text", "CAST(" + x + " AS VARCHAR)", nil
	case pgtype.BPCharOID:
		return "rtrim(" + x + "::text, ' ')", "rtrim(CAST(" + x + " AS VARCHAR), ' ')", nil
	case pgtype.ByteaOID:
		return "encode(" + x + ", 'hex')", "lower(hex(" + x + "))", nil
	case pgtype.DateOID:
		return fmt.Sprintf("CASE WHEN isfinite(%s) THEN (%[1]s - date '1970-01-01')::text ELSE %[1]s::text END", x),
			fmt.Sprintf("CASE WHEN isfinite(%s) THEN CAST(%[1]s - DATE '1970-01-01' AS VARCHAR) "+
				"WHEN %[1]s > DATE '1970-01-01' THEN 'infinity' WHEN %[1]s < DATE '1970-01-01' THEN '-infinity' END", x), nil
	case pgtype.TimeOID:
		return fmt.Sprintf("(extract(epoch from %s) * 1000000)::bigint::text", x),
			fmt.Sprintf("CAST(date_diff('microsecond', TIME '00:00:00', %s) AS VARCHAR)", x), nil
	case pgtype.TimestampOID, pgtype.TimestamptzOID:
		epoch := "TIMESTAMP '1970-01-01'"
		if c.TypeOID == pgtype.TimestamptzOID {
			epoch = "TIMESTAMPTZ '1970-01-01 00:00:00+00'"
		}
		return fmt.Sprintf("CASE WHEN isfinite(%s) THEN (extract(epoch from %[1]s) * 1000000)::bigint::text ELSE %[1]s::text END", x),
			fmt.Sprintf("CASE WHEN isfinite(%s) THEN CAST(epoch_us(%[1]s) AS VARCHAR) "+
				"WHEN %[1]s > %[2]s THEN 'infinity' WHEN %[1]s < %[2]s THEN '-infinity' END", x, epoch), nil
	case pgtype.IntervalOID:
		return fmt.Sprintf("(extract(year from %s) * 12 + extract(month from %[1]s))::bigint::text || ' ' || "+
				"extract(day from %[1]s)::bigint::text || ' ' || "+
				"(extract(hour from %[1]s) * 3600000000 + extract(minute from %[1]s) * 60000000 + extract(microseconds from %[1]s))::bigint::text", x),
			fmt.Sprintf("CAST(datepart('year', %s) * 12 + datepart('month', %[1]s) AS VARCHAR) || ' ' || "+
				"CAST(datepart('day', %[1]s) AS VARCHAR) || ' ' || "+
				"CAST(datepart('hour', %[1]s) * 3600000000 + datepart('minute', %[1]s) * 60000000 + datepart('microseconds', %[1]s) AS VARCHAR)", x), nil
	}
	if k, _, err := c.Kind(); err == nil && k == copybin.KindText {
		// A type copybin stores as its output function's text.
		return fmt.Sprintf("CASE WHEN %s IS NOT NULL THEN format('%%s', %[1]s) END", x), "CAST(" + x + " AS VARCHAR)", nil
	}
	return "", "", fmt.Errorf("no checksum rendering for type %s (oid %d)", c.Type, c.TypeOID)
}

// moneyOID is money's type OID (pgtype has no constant for it).
const moneyOID = 790

// pgField and duckField make a rendering unambiguous: "<bytes>:<text>", or
// "N" for NULL. The bytes are UTF-8's, as DuckDB counts them: with conv
// (a source database in another encoding) the text is converted first.
func pgField(e string, conv bool) string {
	if conv {
		return fmt.Sprintf("coalesce(octet_length(convert_to(%s, 'UTF8'))::text || ':' || %[1]s, 'N')", e)
	}
	return fmt.Sprintf("coalesce(octet_length(%s)::text || ':' || %[1]s, 'N')", e)
}

func duckField(e string) string {
	return fmt.Sprintf("coalesce(CAST(strlen(%s) AS VARCHAR) || ':' || %[1]s, 'N')", e)
}

// checksumQueries returns the PostgreSQL and DuckDB queries that yield
// (count, checksum) for table t; where is a PostgreSQL predicate ("" or
// " WHERE ...") limiting the source side to a ctid range. conv: the source
// database's encoding is neither UTF8 nor SQL_ASCII, so its text is
// hashed and counted as UTF-8, which the copy holds (a snapshot reads
// with client_encoding UTF8).
func checksumQueries(t *table, where string, conv bool) (pg, duck string, err error) {
	var pgParts, duckParts []string
	for _, c := range t.Cols {
		x := pgx.Identifier{c.Name}.Sanitize() // DuckDB quotes identifiers the same way
		p, d, err := renderers(c, x, conv)
		if err != nil {
			return "", "", fmt.Errorf("checksum of %s column %q: %w", t, c.Name, err)
		}
		pgParts = append(pgParts, pgField(p, conv))
		duckParts = append(duckParts, duckField(d))
	}
	row := strings.Join(pgParts, " || ',' || ")
	if conv {
		row = "convert_to(" + row + ", 'UTF8')"
	}
	pg = fmt.Sprintf("SELECT count(*), coalesce(sum(('x' || substr(md5(%s), 1, 15))::bit(60)::bigint), 0)::text FROM ONLY %s%s",
		row, t.pgIdent(), where)
	duck = fmt.Sprintf("SELECT count(*), CAST(coalesce(sum(CAST('0x' || substr(md5(%s), 1, 15) AS BIGINT)), 0) AS VARCHAR) FROM %s",
		strings.Join(duckParts, " || ',' || "), t.pgIdent())
	return pg, duck, nil
}
