package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/qpkit/qpkit/pkg/copybin"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// Each case is one column with the same values written in each engine's
// literal syntax; the two checksums must agree, and must differ when one
// value differs.
func TestChecksumSameInBothEngines(t *testing.T) {
	ctx := context.Background()
	pg, err := pgx.Connect(ctx, pgtest.Shared(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	mustExecPG(t, pg, sessionSetup)
	duck, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer duck.Close()
	cases := []struct {
		pgType, duckType string
		oid              uint32
		pgVals, duckVals []string
	}{
		{"int8", "BIGINT", pgtype.Int8OID, []string{"-9223372036854775808", "0", "NULL", "42"}, []string{"-9223372036854775808", "0", "NULL", "42"}},
		{"int2", "SMALLINT", pgtype.Int2OID, []string{"-7", "NULL"}, []string{"-7", "NULL"}},
		{"numeric(12,3)", "DECIMAL(12,3)", pgtype.NumericOID, []string{"1.5", "-0.25", "100", "0", "NULL"}, []string{"1.5", "-0.25", "100", "0", "NULL"}},
		{"float8", "DOUBLE", pgtype.Float8OID, []string{"0.1", "'-0'", "1e300", "'NaN'", "'Infinity'", "'-Infinity'", "5e-324", "NULL"},
			[]string{"0.1", "'-0'", "1e300", "'NaN'", "'Infinity'", "'-Infinity'", "5e-324", "NULL"}},
		{"float4", "FLOAT", pgtype.Float4OID, []string{"0.1", "3.25", "'NaN'"}, []string{"0.1", "3.25", "'NaN'"}},
		{"bool", "BOOLEAN", pgtype.BoolOID, []string{"true", "false", "NULL"}, []string{"true", "false", "NULL"}},
		{"text", "VARCHAR", pgtype.TextOID, []string{"'héllo, ''x'''", "''", "NULL", "'N'"}, []string{"'héllo, ''x'''", "''", "NULL", "'N'"}},
		{"char(5)", "VARCHAR", pgtype.BPCharOID, []string{"'ab'"}, []string{"'ab   '"}},
		{"bytea", "BLOB", pgtype.ByteaOID, []string{`'\xab00ff'`, `''`}, []string{`'\xAB\x00\xFF'::BLOB`, `''::BLOB`}},
		{"date", "DATE", pgtype.DateOID, []string{"'2024-02-29'", "'1900-01-01'", "'infinity'", "'-infinity'"}, []string{"'2024-02-29'", "'1900-01-01'", "'infinity'", "'-infinity'"}},
		{"time", "TIME", pgtype.TimeOID, []string{"'13:14:15.123456'", "'00:00:00'"}, []string{"'13:14:15.123456'", "'00:00:00'"}},
		{"timestamp", "TIMESTAMP", pgtype.TimestampOID, []string{"'1999-12-31 23:59:59.999999'", "'1960-01-01'", "'infinity'"}, []string{"'1999-12-31 23:59:59.999999'", "'1960-01-01'", "'infinity'"}},
		{"timestamptz", "TIMESTAMPTZ", pgtype.TimestamptzOID, []string{"'2020-06-01 12:00:00+02'", "'-infinity'"}, []string{"'2020-06-01 10:00:00+00'", "'-infinity'"}},
		{"interval", "INTERVAL", pgtype.IntervalOID, []string{"'1 year 2 months 3 days 04:05:06.7'", "'-1 hours -30 minutes'"},
			[]string{"INTERVAL '1 year 2 months 3 days 04:05:06.7'", "-INTERVAL '1 hours 30 minutes'"}},
		{"uuid", "UUID", pgtype.UUIDOID, []string{"'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'"}, []string{"'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'"}},
		{"int4[]", "INTEGER[]", 1007, []string{"'{1,NULL,3}'", "'{}'", "NULL"}, []string{"[1, NULL, 3]", "[]", "NULL"}},
		{"text[]", "VARCHAR[]", 1009, []string{`'{"a,b",""}'`}, []string{`['a,b', '']`}},
		{"float8[]", "DOUBLE[]", 1022, []string{"'{0.1,NaN}'"}, []string{"[0.1::DOUBLE, 'NaN'::DOUBLE]"}},
		{"jsonb", "VARCHAR", pgtype.JSONBOID, []string{`'{"b": 1, "a": [1, 2]}'`}, []string{`'{"a": [1, 2], "b": 1}'`}},
		// Off copybin's hand path: the copy holds PostgreSQL's output text,
		// or the exact DuckDB type.
		{"inet", "VARCHAR", pgtype.InetOID, []string{"'10.0.0.1'", "'10.0.0.0/8'", "'::1'", "NULL"}, []string{"'10.0.0.1'", "'10.0.0.0/8'", "'::1'", "NULL"}},
		{"xml", "VARCHAR", pgtype.XMLOID, []string{`'<?xml version="1.0"?><r>é</r>'`}, []string{"'<r>é</r>'"}},
		{"cidr", "VARCHAR", pgtype.CIDROID, []string{"'10.0.0.1/32'"}, []string{"'10.0.0.1/32'"}},
		{"point", "VARCHAR", pgtype.PointOID, []string{"'(1e300,-0.5)'"}, []string{"'(1e+300,-0.5)'"}},
		{"tstzrange", "VARCHAR", pgtype.TstzrangeOID, []string{"'[2020-01-01 10:00+05,)'", "'empty'"}, []string{`'["2020-01-01 05:00:00+00",)'`, "'empty'"}},
		{"tsquery", "VARCHAR", 3615, []string{"'a & !b'"}, []string{`'''a'' & !''b'''`}},
		{"money", "DECIMAL(19,2)", 790, []string{"12.34", "'-92233720368547758.08'", "0", "NULL"}, []string{"12.34", "-92233720368547758.08", "0", "NULL"}},
		{"xid8", "UBIGINT", pgtype.XID8OID, []string{"'18446744073709551615'", "'0'"}, []string{"18446744073709551615", "0"}},
		{"xid", "BIGINT", pgtype.XIDOID, []string{"'4294967295'"}, []string{"4294967295"}},
		{"timetz", "TIMETZ", pgtype.TimetzOID, []string{"'12:34:56.789+05:30:15'", "'24:00:00-15:59'", "'00:00:00.000001-00:00:01'"},
			[]string{"'12:34:56.789+05:30:15'", "'24:00:00-15:59'", "'00:00:00.000001-00:00:01'"}},
		{"inet[]", "VARCHAR[]", 1041, []string{"'{10.0.0.1,NULL,::1/64}'"}, []string{"['10.0.0.1', NULL, '::1/64']"}},
		{"money[]", "DECIMAL(19,2)[]", 791, []string{"'{1.50,NULL}'"}, []string{"[1.50, NULL]"}},
		{"timetz[]", "TIMETZ[]", 1270, []string{"'{12:00+01,NULL}'"}, []string{"['12:00:00+01'::TIMETZ, NULL]"}},
	}
	for i, c := range cases {
		t.Run(c.pgType, func(t *testing.T) {
			name := fmt.Sprintf("ck%d", i)
			v := copybin.Column{Name: "v", TypeOID: c.oid, Type: c.pgType}
			if c.oid == 790 || c.oid == 791 {
				v.TypMod = 19<<16 | 2 + 4 // as LookupColumns reports money in the C locale
			}
			tb := &table{Schema: "public", Name: name, Cols: []copybin.Column{v, {Name: "k", TypeOID: pgtype.Int4OID, Type: "integer"}}}
			var pgRows, duckRows []string
			for j := range c.pgVals {
				pgRows = append(pgRows, fmt.Sprintf("(%s, %d)", c.pgVals[j], j))
				duckRows = append(duckRows, fmt.Sprintf("(%s, %d)", c.duckVals[j], j))
			}
			mustExecPG(t, pg, fmt.Sprintf("CREATE TABLE %s (v %s, k int); INSERT INTO %[1]s VALUES %[3]s", name, c.pgType, strings.Join(pgRows, ",")))
			mustExecDuck(t, duck, fmt.Sprintf("CREATE SCHEMA IF NOT EXISTS public; CREATE TABLE public.%s (v %s, k INTEGER); INSERT INTO public.%[1]s VALUES %[3]s", name, c.duckType, strings.Join(duckRows, ",")))
			pgQ, duckQ, err := checksumQueries(tb, "", false)
			if err != nil {
				t.Fatal(err)
			}
			var pn, dn int64
			var ps, ds string
			if err := pg.QueryRow(ctx, pgQ).Scan(&pn, &ps); err != nil {
				t.Fatalf("%s: %v", pgQ, err)
			}
			if err := duck.QueryRow(duckQ).Scan(&dn, &ds); err != nil {
				t.Fatalf("%s: %v", duckQ, err)
			}
			if pn != dn || ps != ds || pn != int64(len(c.pgVals)) {
				t.Errorf("postgres %d rows sum %s, duckdb %d rows sum %s", pn, ps, dn, ds)
			}
			// One changed row changes the checksum.
			mustExecDuck(t, duck, fmt.Sprintf("UPDATE public.%s SET k = k + 100 WHERE k = 0", name))
			if err := duck.QueryRow(duckQ).Scan(&dn, &ds); err != nil {
				t.Fatal(err)
			}
			if ds == ps {
				t.Errorf("checksum %s unchanged after an update", ds)
			}
		})
	}
}

func mustExecPG(t *testing.T, pg *pgx.Conn, q string) {
	t.Helper()
	if _, err := pg.Exec(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func mustExecDuck(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
