// Review of the changes of 2026-12-05 (ad247fe..HEAD) in duckwire: each
// test sends the same messages to qpanalytics and to PostgreSQL 15 and
// expects the same answer. Every one fails on the code under review.

package duckwire

import (
	"encoding/binary"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// protectedSpans (rewrite.go) protects every IDENT token whose text starts
// with 'u' or 'U' (meant for U&"..." identifiers), so an unquoted alias
// such as u or ut after a rewritten catalog view is cut off from it:
// "FROM pg_class u" becomes "(SELECT ... ) AS pg_class u", a syntax
// error. Before the change these queries ran.
func TestTodayReviewCatalogViewAliasStartingWithU(t *testing.T) {
	p := dialBoth(t, nil)
	for _, q := range []string{
		"select count(*) >= 0 as ok from pg_class u where u.relname <> ''",
		"select count(*) >= 0 as ok from pg_catalog.pg_class as u",
		"select count(*) >= 0 as ok from pg_namespace un",
		"select count(*) >= 0 as ok from information_schema.tables ut",
	} {
		qp, pg := p.both(&pgproto3.Query{String: q})
		sameAnswers(t, q, qp, pg)
	}
}

// declared.go casts a parameter declared int2 to SMALLINT; DuckDB then
// types the integer literal beside it as SMALLINT too, so arithmetic
// overflows at 32767. PostgreSQL computes int2 * int4 as int4: 100000.
// Before the change the same statement returned 100000.
func TestTodayReviewDeclaredInt2Arithmetic(t *testing.T) {
	p := dialBoth(t, nil)
	for _, c := range []struct{ q, v string }{
		{"select $1 * 100 as x", "1000"},
		{"select $1 + 1 as x", "32767"},
	} {
		qp, pg := p.both(&pgproto3.Parse{Query: c.q, ParameterOIDs: []uint32{21}},
			&pgproto3.Bind{Parameters: [][]byte{[]byte(c.v)}}, &pgproto3.Describe{ObjectType: 'P'},
			&pgproto3.Execute{}, &pgproto3.Sync{})
		sameAnswers(t, c.q+" with int2 "+c.v, qp, pg)
	}
}

// A binary timestamp (without time zone) parameter, declared 1114 as
// Npgsql sends a DateTime, is shifted by the session's TimeZone once the
// statement casts it: CAST($1 AS TIMESTAMP)::date reads the bound value as
// a timestamptz. 2000-01-01 + 700,000,000 s is 2022-03-07 20:26:40, whose
// date is 2022-03-07 (qpanalytics: 2022-03-08 in Asia/Tokyo). Before the
// change "select $1::date" gave 2022-03-07.
func TestTodayReviewDeclaredBinaryTimestampCast(t *testing.T) {
	p := dialBoth(t, map[string]string{"TimeZone": "Asia/Tokyo"})
	v := make([]byte, 8)
	binary.BigEndian.PutUint64(v, 700_000_000_000_000)
	for _, q := range []string{"select $1::date as x", "select $1::text as x"} {
		qp, pg := p.both(&pgproto3.Parse{Query: q, ParameterOIDs: []uint32{1114}},
			&pgproto3.Bind{Parameters: [][]byte{v}, ParameterFormatCodes: []int16{1}},
			&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
		sameAnswers(t, q+" with binary timestamp", qp, pg)
	}
}

// A session function that is the whole item of a subquery's SELECT list
// gets no column name (the item ends at ")", which sessioncalls.go does
// not count as the end of the list), so the outer query cannot refer to
// it: PostgreSQL names the column version / current_database.
func TestTodayReviewSessionCallInSubqueryNamed(t *testing.T) {
	p := dialBoth(t, nil)
	for _, q := range []string{
		"select s.version is not null as ok from (select version()) s",
		"with x as (select current_database()) select count(current_database) as n from x",
	} {
		qp, pg := p.both(&pgproto3.Query{String: q})
		sameAnswers(t, q, qp, pg)
	}
}

// A custom setting first set inside a block (SET LOCAL app.tenant, the
// usual per-transaction tenant pattern) stays defined after the block in
// PostgreSQL, with the value ” ; txblock.go deletes it, so
// current_setting('app.tenant', true) is NULL instead of ” and
// current_setting('app.tenant') fails instead of returning ”. Likewise
// after a failed implicit block.
func TestTodayReviewCustomSettingAfterBlock(t *testing.T) {
	p := dialBoth(t, nil)
	for _, q := range []string{
		"begin; set local app.tenant = '7'; commit",
		"select current_setting('app.tenant', true) as v",
		"select current_setting('app.tenant') as v",
		"set app.other = '1'; select 1/0",
		"select current_setting('app.other', true) as v",
	} {
		qp, pg := p.both(&pgproto3.Query{String: q})
		sameAnswers(t, q, qp, pg)
	}
}
