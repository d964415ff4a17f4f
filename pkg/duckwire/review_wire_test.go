package duckwire

// Review tests of the wire protocol against PostgreSQL 15: every test sends
// the same bytes to qpanalytics and to a real PostgreSQL and expects the
// same answer (type OIDs, typmods, formats, values, tags, SQLSTATEs and
// transaction status included).

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// reviewDetail renders messages with type OIDs, typmods, formats and values.
func reviewDetail(msgs []pgproto3.BackendMessage) string {
	var parts []string
	for _, m := range msgs {
		switch m := m.(type) {
		case *pgproto3.ParameterStatus, *pgproto3.NoticeResponse:
			continue
		case *pgproto3.RowDescription:
			var f []string
			for _, fd := range m.Fields {
				f = append(f, fmt.Sprintf("%s:%d:%d:%d", fd.Name, fd.DataTypeOID, fd.TypeModifier, fd.Format))
			}
			parts = append(parts, "T("+strings.Join(f, ",")+")")
		case *pgproto3.ParameterDescription:
			parts = append(parts, fmt.Sprintf("t%v", m.ParameterOIDs))
		case *pgproto3.DataRow:
			var vals []string
			for _, v := range m.Values {
				if v == nil {
					vals = append(vals, "NULL")
				} else {
					vals = append(vals, fmt.Sprintf("%q", v))
				}
			}
			parts = append(parts, "D("+strings.Join(vals, ",")+")")
		default:
			parts = append(parts, summary([]pgproto3.BackendMessage{m}))
		}
	}
	return strings.Join(parts, " ")
}

// reviewBoth sends msgs to both servers and returns the detailed answers up to
// ReadyForQuery.
func (p clientPair) reviewBoth(msgs ...pgproto3.FrontendMessage) (qp, pg string) {
	p.qp.send(msgs...)
	p.pg.send(msgs...)
	return reviewDetail(p.qp.until('Z')), reviewDetail(p.pg.until('Z'))
}

func reviewSame(t *testing.T, what, qp, pg string) {
	t.Helper()
	if qp != pg {
		t.Errorf("%s:\n qpanalytics %s\n postgres    %s", what, qp, pg)
	}
}

// Parse's parameter type OIDs decide the parameter's type (docs: "types
// come from Parse's OIDs"). `select $1 as x` with $1 declared text must be
// described, by Describe statement and Describe portal alike, as a text
// column x, and the bound '5' must come back as the text '5'. qpanalytics
// describes the statement as `unknown` text, then binds '5' as a number and
// sends an int8 column; declared int4 comes back as an 8-byte int8 in binary.
func TestWireReviewDeclaredParamTypeHonored(t *testing.T) {
	p := dialBoth(t, nil)
	for _, c := range []struct {
		oid     uint32
		formats []int16
	}{{25, nil}, {23, []int16{1}}} {
		name := fmt.Sprintf("s%d", c.oid)
		qp, pg := p.reviewBoth(&pgproto3.Parse{Name: name, Query: "select $1 as x", ParameterOIDs: []uint32{c.oid}},
			&pgproto3.Describe{ObjectType: 'S', Name: name},
			&pgproto3.Bind{PreparedStatement: name, Parameters: [][]byte{[]byte("5")}, ResultFormatCodes: c.formats},
			&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
		reviewSame(t, fmt.Sprintf("select $1 declared as OID %d", c.oid), qp, pg)
	}
}

// Binary date/timestamp parameters: PostgreSQL's `infinity` is the largest
// value of the type (int32 max for date, int64 max for timestamps). It
// arrives in DuckDB as -infinity, so `d < $1` with $1 = infinity matches
// nothing instead of every row (pgx sends pgtype.Date{InfinityModifier:
// pgtype.Infinity} exactly so).
func TestWireReviewBinaryInfinityParam(t *testing.T) {
	p := dialBoth(t, nil)
	for _, c := range []struct {
		what string
		oid  uint32
		cast string
		val  []byte
	}{
		{"date", 1082, "date", []byte{0x7f, 0xff, 0xff, 0xff}},
		{"timestamp", 1114, "timestamp", []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{"timestamptz", 1184, "timestamptz", []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	} {
		q := "select $1::" + c.cast + " as v, (select count(*) from (values ('2024-01-01'::" + c.cast + ")) t(d) where d < $1) as n"
		qp, pg := p.reviewBoth(&pgproto3.Parse{Query: q, ParameterOIDs: []uint32{c.oid}},
			&pgproto3.Bind{Parameters: [][]byte{c.val}, ParameterFormatCodes: []int16{1}},
			&pgproto3.Execute{}, &pgproto3.Sync{})
		reviewSame(t, "binary infinity "+c.what, qp, pg)
	}
}

// A text bytea parameter in PostgreSQL's escape format (`\\` is one
// backslash, `\001` one byte) is decoded by byteain; qpanalytics keeps
// the raw text bytes, so the value differs (and invalid escapes pass).
func TestWireReviewByteaEscapeParam(t *testing.T) {
	p := dialBoth(t, nil)
	for _, v := range []string{`a\\b\001`, `\000x`} {
		qp, pg := p.reviewBoth(&pgproto3.Parse{Query: "select $1 as x", ParameterOIDs: []uint32{17}},
			&pgproto3.Bind{Parameters: [][]byte{[]byte(v)}}, &pgproto3.Execute{}, &pgproto3.Sync{})
		reviewSame(t, "bytea text parameter "+v, qp, pg)
	}
	qp, pg := p.reviewBoth(&pgproto3.Parse{Query: "select $1 as x", ParameterOIDs: []uint32{17}},
		&pgproto3.Bind{Parameters: [][]byte{[]byte(`a\q`)}}, &pgproto3.Execute{}, &pgproto3.Sync{})
	reviewSame(t, `invalid bytea escape a\q`, qp, pg)
}

// ROLLBACK TO SAVEPOINT leaves the failed state of a transaction block
// (status back to T), which is how psql's ON_ERROR_ROLLBACK, JDBC's
// autosave and ORMs recover from an error. qpanalytics answers it with
// 25P02 and the block stays aborted.
func TestWireReviewRollbackToSavepointRecovers(t *testing.T) {
	p := dialBoth(t, nil)
	qp, pg := p.reviewBoth(&pgproto3.Query{String: "begin; savepoint a; select 1/0"})
	reviewSame(t, "error after savepoint", qp, pg)
	qp, pg = p.reviewBoth(&pgproto3.Query{String: "rollback to savepoint a"})
	reviewSame(t, "rollback to savepoint", qp, pg)
	qp, pg = p.reviewBoth(&pgproto3.Query{String: "select 1 as one"})
	reviewSame(t, "query after rollback to savepoint", qp, pg)
	p.reviewBoth(&pgproto3.Query{String: "rollback"})
}

// SET is transactional in PostgreSQL: a SET inside a block that is rolled
// back is undone (and SET LOCAL ends with its block). qpanalytics keeps
// the value, so e.g. a statement_timeout or TimeZone set in an aborted
// block stays in force for the rest of the session.
func TestWireReviewSetUndoneByRollback(t *testing.T) {
	p := dialBoth(t, map[string]string{"TimeZone": "UTC"})
	qp, pg := p.reviewBoth(&pgproto3.Query{String: "begin; set timezone = 'Asia/Tokyo'; rollback; show timezone"})
	reviewSame(t, "SET then ROLLBACK", qp, pg)
	qp, pg = p.reviewBoth(&pgproto3.Query{String: "begin; set timezone = 'Asia/Tokyo'; select 1/0"})
	reviewSame(t, "SET then error", qp, pg)
	qp, pg = p.reviewBoth(&pgproto3.Query{String: "rollback; select '2024-01-01 20:00:00+00'::timestamptz as ts"})
	reviewSame(t, "timestamptz after the failed block", qp, pg)
}

// DEALLOCATE name / DEALLOCATE ALL / DISCARD ALL drop protocol-level
// prepared statements in PostgreSQL, so the name can be prepared again.
// pgx's Conn.DeallocateAll sends "deallocate all" and then re-prepares
// its cached statements under the same names (stmtcache_<hash>): on
// qpanalytics every such Parse fails with 42P05.
func TestWireReviewDeallocateDropsStatements(t *testing.T) {
	p := dialBoth(t, nil)
	for _, sql := range []string{"deallocate s1", "deallocate all", "discard all"} {
		qp, pg := p.reviewBoth(&pgproto3.Parse{Name: "s1", Query: "select 1 as a"}, &pgproto3.Sync{})
		reviewSame(t, "parse s1", qp, pg)
		qp, pg = p.reviewBoth(&pgproto3.Query{String: sql})
		reviewSame(t, sql, qp, pg)
		qp, pg = p.reviewBoth(&pgproto3.Parse{Name: "s1", Query: "select 2 as a"}, &pgproto3.Sync{})
		reviewSame(t, "parse s1 again after "+sql, qp, pg)
		// Leave no s1 behind for the next round on either server.
		p.reviewBoth(&pgproto3.Close{ObjectType: 'S', Name: "s1"}, &pgproto3.Sync{})
	}
}

// START TRANSACTION's CommandComplete tag is "START TRANSACTION", not
// "BEGIN".
func TestWireReviewStartTransactionTag(t *testing.T) {
	p := dialBoth(t, nil)
	qp, pg := p.reviewBoth(&pgproto3.Query{String: "start transaction read only; commit"})
	reviewSame(t, "start transaction", qp, pg)
}

// Savepoints, SET LOCAL, RELEASE and DISCARD ALL as PostgreSQL runs them:
// errors outside a block and for unknown names, what each end of a block
// or savepoint puts back.
func TestWireReviewSavepointsAndSetLocal(t *testing.T) {
	p := dialBoth(t, nil)
	for _, sql := range []string{
		"savepoint a",
		"release a",
		"rollback to a",
		"set local statement_timeout = '1s'; show statement_timeout",
		"begin; set application_name = 'one'; savepoint a; set application_name = 'two'; set local statement_timeout = '5s'; release a; show application_name; show statement_timeout",
		"rollback to savepoint nope",
		"rollback to savepoint a",
		"rollback; show application_name; show statement_timeout",
		"begin; set local statement_timeout = '7s'; show statement_timeout; commit; show statement_timeout",
		"begin; set statement_timeout = '3s'; savepoint s; set statement_timeout = '4s'; set local application_name = 'x'; rollback to s; show statement_timeout; show application_name; commit; show statement_timeout",
		"begin; set local statement_timeout = '6s'; set statement_timeout = '8s'; commit; show statement_timeout",
		"begin; savepoint b; savepoint b; release b; rollback to b; release b; rollback to b",
		"rollback",
		"begin; discard all",
		"rollback",
		"set statement_timeout = '9s'; discard all; show statement_timeout",
		"deallocate nope",
	} {
		qp, pg := p.reviewBoth(&pgproto3.Query{String: sql})
		reviewSame(t, sql, qp, pg)
	}
}

// Text parameters of declared integer and boolean types are read as
// int2in/int4in/int8in and boolin read them (range 22003, syntax 22P02,
// boolean prefixes), and a Parse inside a failed block is 25P02.
func TestWireReviewParamInputAndFailedParse(t *testing.T) {
	p := dialBoth(t, nil)
	for _, c := range []struct {
		oid uint32
		val string
	}{
		{21, "70000"}, {21, "-32768"}, {23, "2147483648"}, {23, "abc"}, {20, "99999999999999999999"}, {20, " 42 "},
		{16, "tr"}, {16, "Of"}, {16, "o"}, {16, "ye"}, {16, " N "}, {16, "2"},
	} {
		qp, pg := p.reviewBoth(&pgproto3.Parse{Query: "select $1 as x", ParameterOIDs: []uint32{c.oid}},
			&pgproto3.Bind{Parameters: [][]byte{[]byte(c.val)}}, &pgproto3.Execute{}, &pgproto3.Sync{})
		reviewSame(t, fmt.Sprintf("type %d text %q", c.oid, c.val), qp, pg)
	}
	qp, pg := p.reviewBoth(&pgproto3.Query{String: "begin; select 1/0"})
	reviewSame(t, "error in a block", qp, pg)
	qp, pg = p.reviewBoth(&pgproto3.Parse{Name: "inerr", Query: "select 1"}, &pgproto3.Sync{})
	reviewSame(t, "Parse in a failed block", qp, pg)
	qp, pg = p.reviewBoth(&pgproto3.Parse{Query: "rollback"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	reviewSame(t, "Parse of ROLLBACK in a failed block", qp, pg)
}
