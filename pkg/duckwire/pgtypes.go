// Types: the PostgreSQL type (OID, size, typmod, name) each DuckDB type is shown as.

package duckwire

import (
	"strconv"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/qpkit/qpkit/pkg/pgwire"
)

// pgType is how a DuckDB type looks to a PostgreSQL client.
type pgType struct {
	oid  uint32
	size int16
	mod  int32   // typmod; -1 none
	name string  // as format_type prints it
	elem *pgType // element of an array type
}

var (
	tBool        = &pgType{pgwire.OIDBool, 1, -1, "boolean", nil}
	tInt2        = &pgType{pgwire.OIDInt2, 2, -1, "smallint", nil}
	tInt4        = &pgType{pgwire.OIDInt4, 4, -1, "integer", nil}
	tInt8        = &pgType{pgwire.OIDInt8, 8, -1, "bigint", nil}
	tFloat4      = &pgType{pgwire.OIDFloat4, 4, -1, "real", nil}
	tFloat8      = &pgType{pgwire.OIDFloat8, 8, -1, "double precision", nil}
	tNumeric     = &pgType{pgwire.OIDNumeric, -1, -1, "numeric", nil}
	tText        = &pgType{pgwire.OIDText, -1, -1, "text", nil}
	tBytea       = &pgType{pgwire.OIDBytea, -1, -1, "bytea", nil}
	tDate        = &pgType{pgwire.OIDDate, 4, -1, "date", nil}
	tTime        = &pgType{pgwire.OIDTime, 8, -1, "time without time zone", nil}
	tTimetz      = &pgType{pgwire.OIDTimetz, 12, -1, "time with time zone", nil}
	tTimestamp   = &pgType{pgwire.OIDTimestamp, 8, -1, "timestamp without time zone", nil}
	tTimestamptz = &pgType{pgwire.OIDTimestamptz, 8, -1, "timestamp with time zone", nil}
	tInterval    = &pgType{pgwire.OIDInterval, 16, -1, "interval", nil}
	tUUID        = &pgType{pgwire.OIDUUID, 16, -1, "uuid", nil}
	tJSON        = &pgType{pgwire.OIDJSON, -1, -1, "json", nil}
)

// byDuckName maps DuckDB's type names (as the driver prints them) to types.
var byDuckName = map[string]*pgType{
	"BOOLEAN": tBool, "TINYINT": tInt2, "SMALLINT": tInt2, "UTINYINT": tInt2,
	"INTEGER": tInt4, "USMALLINT": tInt4, "BIGINT": tInt8, "UINTEGER": tInt8,
	"UBIGINT": tNumeric, "HUGEINT": tNumeric, "UHUGEINT": tNumeric, "BIGNUM": tNumeric,
	"FLOAT": tFloat4, "DOUBLE": tFloat8, "VARCHAR": tText, "ENUM": tText, "BIT": tText,
	"BLOB": tBytea, "DATE": tDate, "TIME": tTime, "TIMETZ": tTimetz,
	"TIMESTAMP": tTimestamp, "TIMESTAMP_S": tTimestamp, "TIMESTAMP_MS": tTimestamp, "TIMESTAMP_NS": tTimestamp,
	"TIMESTAMPTZ": tTimestamptz, "TIMESTAMP WITH TIME ZONE": tTimestamptz, "TIME WITH TIME ZONE": tTimetz, "INTERVAL": tInterval, "UUID": tUUID, "JSON": tJSON,
}

// typeOfName maps a DuckDB type name such as "DECIMAL(15,2)" or
// "INTEGER[]" to its PostgreSQL type; anything else (STRUCT, MAP, UNION,
// nested lists of unmapped types) is shown as text.
func typeOfName(name string) *pgType {
	if t, ok := byDuckName[name]; ok {
		return t
	}
	if elemName, ok := strings.CutSuffix(name, "[]"); ok {
		return arrayOf(typeOfName(elemName))
	}
	if rest, ok := strings.CutPrefix(name, "DECIMAL("); ok {
		p, s, _ := strings.Cut(strings.TrimSuffix(rest, ")"), ",")
		pi, err1 := strconv.Atoi(strings.TrimSpace(p))
		si, err2 := strconv.Atoi(strings.TrimSpace(s))
		if err1 == nil && err2 == nil {
			return decimal(pi, si)
		}
		return tNumeric
	}
	if rest, ok := strings.CutSuffix(name, "]"); ok { // fixed-size ARRAY: INTEGER[3]
		if i := strings.LastIndexByte(rest, '['); i > 0 {
			return arrayOf(typeOfName(rest[:i]))
		}
	}
	return &pgType{pgwire.OIDText, -1, -1, "text", nil}
}

func decimal(p, s int) *pgType {
	return &pgType{oid: pgwire.OIDNumeric, size: -1, mod: int32(p<<16|s) + 4,
		name: "numeric(" + strconv.Itoa(p) + "," + strconv.Itoa(s) + ")"}
}

func arrayOf(e *pgType) *pgType {
	oid := pgwire.ArrayOID(e.oid)
	if oid == 0 || e.elem != nil {
		// No PostgreSQL array type for it: the whole value as text.
		return &pgType{oid: pgwire.OIDText, size: -1, mod: -1, name: "text", elem: e}
	}
	return &pgType{oid: oid, size: -1, mod: e.mod, name: e.name + "[]", elem: e}
}

// typeOfInfo maps a prepared statement's column TypeInfo.
func typeOfInfo(ti duckdb.TypeInfo) *pgType {
	switch ti.InternalType() {
	case duckdb.TYPE_DECIMAL:
		if d, ok := ti.Details().(*duckdb.DecimalDetails); ok {
			return decimal(int(d.Width), int(d.Scale))
		}
		return tNumeric
	case duckdb.TYPE_LIST:
		if d, ok := ti.Details().(*duckdb.ListDetails); ok {
			return arrayOf(typeOfInfo(d.Child))
		}
	case duckdb.TYPE_ARRAY:
		if d, ok := ti.Details().(*duckdb.ArrayDetails); ok {
			return arrayOf(typeOfInfo(d.Child))
		}
	case duckdb.TYPE_VARCHAR:
		if ti.Alias() == "JSON" {
			return tJSON
		}
	}
	return typeOfName(typeIDName(ti.InternalType()))
}

func typeIDName(t duckdb.Type) string {
	switch t {
	case duckdb.TYPE_BOOLEAN:
		return "BOOLEAN"
	case duckdb.TYPE_TINYINT:
		return "TINYINT"
	case duckdb.TYPE_SMALLINT:
		return "SMALLINT"
	case duckdb.TYPE_UTINYINT:
		return "UTINYINT"
	case duckdb.TYPE_INTEGER:
		return "INTEGER"
	case duckdb.TYPE_USMALLINT:
		return "USMALLINT"
	case duckdb.TYPE_BIGINT:
		return "BIGINT"
	case duckdb.TYPE_UINTEGER:
		return "UINTEGER"
	case duckdb.TYPE_UBIGINT, duckdb.TYPE_HUGEINT, duckdb.TYPE_UHUGEINT, duckdb.TYPE_BIGNUM:
		return "HUGEINT"
	case duckdb.TYPE_FLOAT:
		return "FLOAT"
	case duckdb.TYPE_DOUBLE:
		return "DOUBLE"
	case duckdb.TYPE_VARCHAR, duckdb.TYPE_ENUM:
		return "VARCHAR"
	case duckdb.TYPE_BLOB:
		return "BLOB"
	case duckdb.TYPE_DATE:
		return "DATE"
	case duckdb.TYPE_TIME:
		return "TIME"
	case duckdb.TYPE_TIME_TZ:
		return "TIMETZ"
	case duckdb.TYPE_TIMESTAMP, duckdb.TYPE_TIMESTAMP_S, duckdb.TYPE_TIMESTAMP_MS, duckdb.TYPE_TIMESTAMP_NS:
		return "TIMESTAMP"
	case duckdb.TYPE_TIMESTAMP_TZ:
		return "TIMESTAMPTZ"
	case duckdb.TYPE_INTERVAL:
		return "INTERVAL"
	case duckdb.TYPE_UUID:
		return "UUID"
	}
	return "OTHER"
}

// paramType is the PostgreSQL type reported for a DuckDB parameter type.
// DuckDB leaves a parameter untyped where PostgreSQL would infer one from
// an ambiguous context, mostly arithmetic and decimal comparisons
// (decimal_col > $1); those are reported as numeric, which drivers encode
// from integers, floats and strings alike, and coerce turns back into a
// number.
func paramType(t duckdb.Type) uint32 {
	if t == duckdb.TYPE_INVALID || t == duckdb.TYPE_ANY || t == duckdb.TYPE_SQLNULL {
		return pgwire.OIDNumeric
	}
	return typeOfName(typeIDName(t)).oid
}
