// Review of 529d1b3 / f4eba95 (session calls, COPY option checks, binary
// timestamps) against PostgreSQL 15: each test sends the same messages to
// qpanalytics and to PostgreSQL and expects the same answer.

package duckwire

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// rvFix3Desc is the RowDescription of a summary (the column names), or the
// whole summary when there is none (an error).
func rvFix3Desc(s string) string {
	if i := strings.Index(s, "T("); i >= 0 {
		return s[i : i+strings.Index(s[i:], ")")+1]
	}
	return s
}

// rewriteSessionCalls replaces current_user, current_schema, ... wherever
// the scanner finds the keyword, also where it is a column label (AS
// current_schema, or the bare label current_user, both valid in
// PostgreSQL: ColLabel / BareColLabel take reserved keywords). The label
// becomes a string literal and DuckDB refuses the statement (42601).
// "select current_schema() as current_schema" ran before f4eba95 (the
// old pattern wanted parentheses after current_schema).
func TestFixReviewSessionCallKeywordAsLabel(t *testing.T) {
	p := dialBoth(t, nil)
	for _, q := range []string{
		"select 1 as current_user, 2 as current_schema",
		"select 1 current_user",
		"select 1 as session_user, 2 as current_role, 3 as current_catalog",
	} {
		qp, pg := p.both(&pgproto3.Query{String: q})
		sameAnswers(t, q, qp, pg)
	}
	const q = "select current_schema() as current_schema"
	qp, pg := p.both(&pgproto3.Query{String: q})
	sameAnswers(t, q, rvFix3Desc(qp), rvFix3Desc(pg))
}

// The docs promise that a session call that is a whole item of a SELECT
// list keeps PostgreSQL's column name. rewriteSessionCalls forgets the
// outer SELECT list once a scalar subquery in it closes (listDepth = -1),
// and never counts an item after DISTINCT, so these columns are named
// ?column? instead of current_database / version.
func TestFixReviewSessionCallNamedAfterSubquery(t *testing.T) {
	p := dialBoth(t, nil)
	for _, q := range []string{
		"select (select 1) as a, current_database()",
		"select (select max(x) from (values (1)) v(x)) as m, version()",
		"select distinct current_database()",
	} {
		qp, pg := p.both(&pgproto3.Query{String: q})
		sameAnswers(t, q, rvFix3Desc(qp), rvFix3Desc(pg))
	}
}

// PostgreSQL's ProcessCopyOptions checks the delimiter's own validity
// (not a backslash, letter, digit or '.' in text mode; not the quote in
// CSV) before it checks the NULL string, with 22023; the new NULL checks
// in copyOptions come first and answer 0A000 for the same commands
// (DELIMITER '\' was 22023 before f4eba95: the default NULL \N holds the
// backslash). HEADER 'match' in COPY TO is 0A000 in PostgreSQL ("cannot
// use "match" with HEADER in COPY TO"), not 42601.
func TestFixReviewCopyOptionErrorOrder(t *testing.T) {
	p := dialBoth(t, nil)
	for _, q := range []string{
		`copy (select 1 as x) to stdout (delimiter '\')`,
		"copy (select 1 as x) to stdout (format csv, null ',', quote ',')",
		"copy (select 1 as x) to stdout (header 'match')",
	} {
		qp, pg := p.both(&pgproto3.Query{String: q})
		sameAnswers(t, q, qp, pg)
	}
}

// A binary timestamp (without time zone) is now bound as text so that the
// session's TimeZone does not move it, but only for years 1 to 9999; a
// later (PostgreSQL goes to 294276) or BC one is still bound as an instant
// and shifted: in Asia/Tokyo 11506-08-17 01:20:00 comes back as 10:20:00,
// and the date of 0033-10-02 16:26:40 BC becomes 0033-10-03 BC.
func TestFixReviewBinaryTimestampOutsideYears1To9999(t *testing.T) {
	p := dialBoth(t, map[string]string{"TimeZone": "Asia/Tokyo"})
	for _, c := range []struct {
		us int64
		q  string
	}{
		{300_000_072_000_000_000, "select $1::text as x"}, // 11506-08-17 01:20:00
		{-64_099_928_000_000_000, "select $1::date as x"}, // 0033-10-02 16:26:40 BC
	} {
		v := make([]byte, 8)
		binary.BigEndian.PutUint64(v, uint64(c.us))
		qp, pg := p.both(&pgproto3.Parse{Query: c.q, ParameterOIDs: []uint32{1114}},
			&pgproto3.Bind{Parameters: [][]byte{v}, ParameterFormatCodes: []int16{1}},
			&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
		sameAnswers(t, c.q+" with a binary timestamp", qp, pg)
	}
}
