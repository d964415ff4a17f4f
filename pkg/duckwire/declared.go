// Parameter types a client declares in Parse: PostgreSQL types the
// parameter as declared, so its value is read and its column described as
// that type; DuckDB would infer its own.

package duckwire

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/qpkit/qpkit/pkg/pgwire"
)

// declaredCast names the DuckDB type a declared parameter is cast to,
// after the dialect's translation (which would wrap some PostgreSQL casts
// in checks that use the parameter twice). int2 is cast to INTEGER: DuckDB
// would type a literal beside a SMALLINT as SMALLINT ($1 * 100 overflows),
// where PostgreSQL's int2 * int4 is int4; Bind checks int2's range. bytea binds as BLOB already;
// numeric has no DuckDB type of unbounded precision, so it is left to
// DuckDB as before.
var declaredCast = map[uint32]string{
	pgwire.OIDBool: "BOOLEAN", pgwire.OIDInt2: "INTEGER", pgwire.OIDInt4: "INTEGER", pgwire.OIDInt8: "BIGINT",
	pgwire.OIDText: "VARCHAR", pgwire.OIDVarchar: "VARCHAR", pgwire.OIDFloat4: "FLOAT", pgwire.OIDFloat8: "DOUBLE",
	pgwire.OIDDate: "DATE", pgwire.OIDTime: "TIME", pgwire.OIDTimestamp: "TIMESTAMP",
	pgwire.OIDTimestamptz: "TIMESTAMPTZ", pgwire.OIDInterval: "INTERVAL", pgwire.OIDUUID: "UUID", pgwire.OIDJSON: "JSON",
}

// castDeclaredParams rewrites each $n of translated (DuckDB) SQL whose type
// the client declared as CAST($n AS type), so that DuckDB types it as
// PostgreSQL would. Parameters
// declared 0 (unspecified) or of a type not listed stay as they are.
func castDeclaredParams(sql string, oids []uint32) string {
	some := false
	for _, oid := range oids {
		if declaredCast[oid] != "" {
			some = true
			break
		}
	}
	if !some {
		return sql
	}
	scan, err := pg_query.Scan(sql)
	if err != nil {
		return sql // the translation reports the syntax error
	}
	var b strings.Builder
	last := 0
	for _, tok := range scan.GetTokens() {
		if tok.GetToken() != pg_query.Token_PARAM {
			continue
		}
		start, end := int(tok.GetStart()), int(tok.GetEnd())
		n, err := strconv.Atoi(sql[start+1 : end])
		if err != nil || n < 1 || n > len(oids) || declaredCast[oids[n-1]] == "" {
			continue
		}
		b.WriteString(sql[last:start])
		b.WriteString("CAST(" + sql[start:end] + " AS " + declaredCast[oids[n-1]] + ")")
		last = end
	}
	if last == 0 {
		return sql
	}
	b.WriteString(sql[last:])
	return b.String()
}
