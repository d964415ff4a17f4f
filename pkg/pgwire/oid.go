// Type OIDs: the pg_type OIDs a server needs for RowDescription and ParameterDescription.

package pgwire

// PostgreSQL type OIDs (pg_type.oid), fixed since the types were created;
// array OIDs are the element's typarray.
const (
	OIDBool        uint32 = 16
	OIDBytea       uint32 = 17
	OIDChar        uint32 = 18
	OIDName        uint32 = 19
	OIDInt8        uint32 = 20
	OIDInt2        uint32 = 21
	OIDInt4        uint32 = 23
	OIDText        uint32 = 25
	OIDOID         uint32 = 26
	OIDJSON        uint32 = 114
	OIDFloat4      uint32 = 700
	OIDFloat8      uint32 = 701
	OIDUnknown     uint32 = 705
	OIDBpchar      uint32 = 1042
	OIDVarchar     uint32 = 1043
	OIDDate        uint32 = 1082
	OIDTime        uint32 = 1083
	OIDTimestamp   uint32 = 1114
	OIDTimestamptz uint32 = 1184
	OIDInterval    uint32 = 1186
	OIDTimetz      uint32 = 1266
	OIDNumeric     uint32 = 1700
	OIDUUID        uint32 = 2950
	OIDJSONB       uint32 = 3802

	OIDBoolArray        uint32 = 1000
	OIDByteaArray       uint32 = 1001
	OIDInt2Array        uint32 = 1005
	OIDInt4Array        uint32 = 1007
	OIDTextArray        uint32 = 1009
	OIDVarcharArray     uint32 = 1015
	OIDInt8Array        uint32 = 1016
	OIDFloat4Array      uint32 = 1021
	OIDFloat8Array      uint32 = 1022
	OIDDateArray        uint32 = 1182
	OIDTimeArray        uint32 = 1183
	OIDTimestampArray   uint32 = 1115
	OIDTimestamptzArray uint32 = 1185
	OIDIntervalArray    uint32 = 1187
	OIDNumericArray     uint32 = 1231
	OIDUUIDArray        uint32 = 2951
	OIDJSONArray        uint32 = 199
)

// ArrayOID is the OID of the one-dimensional array of elem, or 0 when
// there is none in this table.
func ArrayOID(elem uint32) uint32 {
	switch elem {
	case OIDBool:
		return OIDBoolArray
	case OIDBytea:
		return OIDByteaArray
	case OIDInt2:
		return OIDInt2Array
	case OIDInt4:
		return OIDInt4Array
	case OIDInt8:
		return OIDInt8Array
	case OIDText:
		return OIDTextArray
	case OIDVarchar:
		return OIDVarcharArray
	case OIDFloat4:
		return OIDFloat4Array
	case OIDFloat8:
		return OIDFloat8Array
	case OIDDate:
		return OIDDateArray
	case OIDTime:
		return OIDTimeArray
	case OIDTimestamp:
		return OIDTimestampArray
	case OIDTimestamptz:
		return OIDTimestamptzArray
	case OIDInterval:
		return OIDIntervalArray
	case OIDNumeric:
		return OIDNumericArray
	case OIDUUID:
		return OIDUUIDArray
	case OIDJSON:
		return OIDJSONArray
	}
	return 0
}
