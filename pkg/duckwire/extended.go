// Extended query protocol: Parse, Bind, Describe, Execute (with row limits), Close and Sync.

package duckwire

import (
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5/pgproto3"
)

// prepared is a named or unnamed prepared statement.
type prepared struct {
	st        statement
	duckSQL   string
	duck      *duckStmt // nil for local statements and catalog answers
	paramOIDs []uint32
	declared  []uint32      // Parse's own OIDs: such values bind as decoded, cast in the SQL
	duckTypes []duckdb.Type // DuckDB's parameter types, for coerce
	cols      []column      // described result; nil: unknown until run
	busy      bool          // duck has open rows (a suspended portal)
	closed    bool          // closed by the client while busy
}

func (p *prepared) close() {
	if p.duck != nil && !p.busy {
		p.duck.Close()
		p.duck = nil
	}
	p.closed = true
}

// portal is a bound statement, started at its first Describe or Execute.
type portal struct {
	ps      *prepared
	args    []driver.NamedValue
	formats []int16
	started bool
	rs      resultSet
	tag     string
	err     error
	sent    int64
	done    bool
	dst     []driver.Value
	t0      time.Time
}

// fail reports an extended-protocol error and skips to the next Sync.
func (ss *session) fail(err error) {
	ss.sendError(err)
	ss.skipSync = true
}

func (ss *session) parse(body []byte) {
	var m pgproto3.Parse
	if err := m.Decode(body); err != nil {
		ss.fail(errorf(codeProtocol, "invalid Parse message"))
		return
	}
	if old, ok := ss.stmts[m.Name]; ok {
		if m.Name != "" {
			ss.fail(errorf(codeDuplicatePStmt, fmt.Sprintf("prepared statement %q already exists", m.Name)))
			return
		}
		old.close()
		delete(ss.stmts, "")
	}
	stmts := split(m.Query)
	if len(stmts) > 1 {
		ss.fail(errorf(codeSyntax, "cannot insert multiple commands into a prepared statement"))
		return
	}
	if ss.tx == 'E' && !endsFailedBlock(stmts[0].kind) {
		ss.fail(errorf(codeInFailedTx, "current transaction is aborted, commands ignored until end of transaction block"))
		return
	}
	ps := &prepared{st: stmts[0], paramOIDs: m.ParameterOIDs, declared: m.ParameterOIDs}
	if ps.st.kind == kindCopyOut {
		ps.st = refused(codeNotSupported, "COPY ... TO STDOUT is supported by qpanalytics in the simple query protocol only")
	}
	if ps.st.kind == kindRefused {
		ss.srv.metrics.query(outcomeRefused, 0)
		ss.fail(ps.st.err)
		return
	}
	if ps.st.kind == kindQuery {
		if rs, ok := ss.intercept(ps.st.sql); ok {
			ps.cols = rs.columns()
		} else {
			sql, err := ss.translate(ps.st.sql)
			if err != nil {
				ss.srv.metrics.query(outcomeRefused, 0)
				ss.fail(err)
				return
			}
			sql = castDeclaredParams(sql, m.ParameterOIDs)
			duck, err := ss.prepareDuck(sql)
			if err != nil {
				ss.srv.metrics.query(outcomeError, 0)
				ss.fail(err)
				return
			}
			ps.duckSQL, ps.duck = sql, duck
			n := duck.NumInput()
			oids := make([]uint32, max(n, len(m.ParameterOIDs)))
			copy(oids, m.ParameterOIDs)
			ps.duckTypes = make([]duckdb.Type, n)
			for i := range ps.duckTypes {
				ps.duckTypes[i], _ = duck.ParamType(i + 1)
				if oids[i] == 0 {
					oids[i] = paramType(ps.duckTypes[i])
				}
			}
			ps.paramOIDs = oids
			ps.cols = duck.describe()
			if ps.st.tag == "EXPLAIN" {
				ps.cols = explainColumns
			}
		}
	}
	ss.stmts[m.Name] = ps
	ss.out = append(ss.out, '1', 0, 0, 0, 4)
}

func (ss *session) bind(body []byte) {
	var m pgproto3.Bind
	if err := m.Decode(body); err != nil {
		ss.fail(errorf(codeProtocol, "invalid Bind message"))
		return
	}
	ps, ok := ss.stmts[m.PreparedStatement]
	if !ok {
		ss.fail(errorf(codeUndefinedPStmt, fmt.Sprintf("prepared statement %q does not exist", m.PreparedStatement)))
		return
	}
	if len(m.Parameters) != len(ps.paramOIDs) {
		ss.fail(errorf(codeProtocol, fmt.Sprintf("bind message supplies %d parameters, but prepared statement %q requires %d",
			len(m.Parameters), m.PreparedStatement, len(ps.paramOIDs))))
		return
	}
	if n := len(m.ParameterFormatCodes); n > 1 && n != len(m.Parameters) {
		ss.fail(errorf(codeProtocol, fmt.Sprintf("bind message has %d parameter formats but %d parameters", n, len(m.Parameters))))
		return
	}
	args := make([]driver.NamedValue, len(m.Parameters))
	for i, p := range m.Parameters {
		v, err := decodeParam(ps.paramOIDs[i], formatOf(m.ParameterFormatCodes, i), p)
		if err == nil && i < len(ps.duckTypes) && (i >= len(ps.declared) || declaredCast[ps.declared[i]] == "") {
			v, err = coerce(v, ps.duckTypes[i])
		}
		if err != nil {
			ss.fail(err)
			return
		}
		args[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	if _, ok := ss.portals[m.DestinationPortal]; ok {
		if m.DestinationPortal != "" {
			ss.fail(errorf("42P03", fmt.Sprintf("cursor %q already exists", m.DestinationPortal)))
			return
		}
		ss.dropPortal("")
	}
	// PostgreSQL checks the result format count at Bind, where the
	// statement's columns are known.
	if n := len(m.ResultFormatCodes); n > 1 {
		if cols, known := ps.columnCount(); known && n != cols {
			ss.fail(formatCountError(n, cols))
			return
		}
	}
	formats := make([]int16, len(m.ResultFormatCodes))
	copy(formats, m.ResultFormatCodes)
	ss.portals[m.DestinationPortal] = &portal{ps: ps, args: args, formats: formats}
	ss.out = append(ss.out, '2', 0, 0, 0, 4)
}

// columnCount is the number of result columns a portal of ps will have,
// where Parse already knew it (a DuckDB query, SHOW; statements without
// a result have none).
func (ps *prepared) columnCount() (int, bool) {
	switch {
	case ps.st.kind == kindShow:
		return len(showColumns(ps.st.name)), true
	case ps.st.kind == kindSetConfig:
		return len(ps.st.cols), true
	case ps.st.kind == kindQuery && ps.cols != nil:
		return len(ps.cols), true
	}
	return 0, false
}

func (ss *session) describe(body []byte) {
	var m pgproto3.Describe
	if err := m.Decode(body); err != nil {
		ss.fail(errorf(codeProtocol, "invalid Describe message"))
		return
	}
	if m.ObjectType == 'S' {
		ps, ok := ss.stmts[m.Name]
		if !ok {
			ss.fail(errorf(codeUndefinedPStmt, fmt.Sprintf("prepared statement %q does not exist", m.Name)))
			return
		}
		at := ss.begin('t')
		ss.out = binary.BigEndian.AppendUint16(ss.out, uint16(len(ps.paramOIDs)))
		for _, oid := range ps.paramOIDs {
			ss.out = binary.BigEndian.AppendUint32(ss.out, oid)
		}
		ss.end(at)
		switch {
		case ps.st.kind == kindShow:
			var cols []column
			for _, name := range showColumns(ps.st.name) {
				if name == "" {
					name = ss.settings.canonical(ps.st.name)
				}
				cols = append(cols, column{name: name, typ: tText})
			}
			ss.rowDescription(cols, nil)
		case ps.st.kind == kindSetConfig:
			ss.rowDescription(textRows(ps.st.cols).cols, nil)
		case ps.st.kind == kindQuery && ps.cols != nil:
			ss.rowDescription(ps.cols, nil)
		default:
			ss.noData()
		}
		return
	}
	p, ok := ss.portals[m.Name]
	if !ok {
		ss.fail(errorf(codeUndefinedCursor, fmt.Sprintf("portal %q does not exist", m.Name)))
		return
	}
	if !ss.startPortal(p) {
		return
	}
	if p.rs == nil {
		ss.noData()
		return
	}
	if err := checkFormats(p.rs.columns(), p.formats); err != nil {
		ss.fail(err)
		return
	}
	ss.rowDescription(p.rs.columns(), p.formats)
}

// startPortal runs the portal's statement once; false when it failed
// (the error has been sent).
func (ss *session) startPortal(p *portal) bool {
	if !p.started {
		p.started, p.t0 = true, time.Now()
		st := p.ps.st
		if ss.tx == 'E' && !endsFailedBlock(st.kind) {
			p.err = errorf(codeInFailedTx, "current transaction is aborted, commands ignored until end of transaction block")
		} else if st.kind == kindQuery && p.ps.duck != nil {
			p.rs, p.err = ss.runPrepared(p.ps, p.args)
			p.tag = "SELECT"
			if st.tag == "EXPLAIN" && p.err == nil {
				p.rs, p.tag = explainRows(p.rs), "EXPLAIN"
			}
		} else {
			p.rs, p.tag, p.err = ss.start(st, p.args)
		}
		if p.rs != nil {
			p.dst = make([]driver.Value, len(p.rs.columns()))
		}
	}
	if p.err != nil {
		ss.fail(p.err)
		return false
	}
	return true
}

// runPrepared runs a prepared DuckDB statement; a statement whose rows are
// still open in another portal is prepared again for this one.
func (ss *session) runPrepared(ps *prepared, args []driver.NamedValue) (resultSet, error) {
	duck, own := ps.duck, false
	if ps.busy {
		var err error
		if duck, err = ss.prepareDuck(ps.duckSQL); err != nil {
			return nil, err
		}
		own = true
	}
	t0 := time.Now()
	rs, err := ss.runDuck(duck, args)
	if err != nil {
		if own {
			duck.Close()
		}
		ss.srv.metrics.failed(err, time.Since(t0))
		return nil, err
	}
	if own {
		return &closingRows{resultSet: rs, close2: func() { duck.Close() }}, nil
	}
	ps.busy = true
	return &closingRows{resultSet: rs, close2: func() {
		ps.busy = false
		if ps.closed {
			ps.close()
		}
	}}, nil
}

func (ss *session) execute(body []byte) {
	var m pgproto3.Execute
	if err := m.Decode(body); err != nil {
		ss.fail(errorf(codeProtocol, "invalid Execute message"))
		return
	}
	p, ok := ss.portals[m.Portal]
	if !ok {
		ss.fail(errorf(codeUndefinedCursor, fmt.Sprintf("portal %q does not exist", m.Portal)))
		return
	}
	if !ss.startPortal(p) {
		return
	}
	if p.ps.st.kind == kindEmpty {
		ss.emptyQuery()
		return
	}
	if p.rs == nil {
		if !p.done {
			p.done = true
		}
		ss.commandComplete(p.tag)
		return
	}
	if p.done {
		ss.commandComplete(rowsTag(p.tag, 0))
		return
	}
	if err := checkFormats(p.rs.columns(), p.formats); err != nil {
		ss.fail(err)
		return
	}
	n, more, err := ss.writeRows(p.rs, p.formats, int64(m.MaxRows), p.dst)
	p.sent += n
	if err != nil {
		ss.srv.metrics.query(outcomeError, time.Since(p.t0))
		p.rs.close()
		p.rs, p.done = nil, true
		ss.fail(err)
		return
	}
	if more {
		ss.out = append(ss.out, 's', 0, 0, 0, 4)
		return
	}
	ss.srv.metrics.query(outcomeOK, time.Since(p.t0))
	p.done = true
	p.rs.close()
	p.rs = emptyRows(p.rs.columns())
	// As PostgreSQL: the rows this Execute sent, not the portal's total.
	ss.commandComplete(rowsTag(p.tag, n))
}

func emptyRows(cols []column) resultSet { return &localRows{cols: cols} }

func (ss *session) closeMsg(body []byte) {
	var m pgproto3.Close
	if err := m.Decode(body); err != nil {
		ss.fail(errorf(codeProtocol, "invalid Close message"))
		return
	}
	if m.ObjectType == 'S' {
		if ps, ok := ss.stmts[m.Name]; ok {
			ps.close()
			delete(ss.stmts, m.Name)
		}
	} else {
		ss.dropPortal(m.Name)
	}
	ss.out = append(ss.out, '3', 0, 0, 0, 4)
}

func (ss *session) dropPortal(name string) {
	if p, ok := ss.portals[name]; ok {
		if p.rs != nil {
			p.rs.close()
		}
		delete(ss.portals, name)
	}
}

// sync ends the implicit transaction: portals go unless a transaction
// block is open; then ReadyForQuery.
func (ss *session) sync() {
	ss.skipSync = false
	if ss.tx == 'I' {
		ss.dropPortals()
	}
	ss.ready()
}

// dropPortals ends every portal: the transaction they belonged to ended
// (a Sync outside a block, or COMMIT or ROLLBACK in a Query).
func (ss *session) dropPortals() {
	for name := range ss.portals {
		ss.dropPortal(name)
	}
}
