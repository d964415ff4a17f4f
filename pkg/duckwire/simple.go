// Simple query protocol: one Query message, any number of statements, each answered in turn.

package duckwire

import (
	"database/sql/driver"
	"strconv"
	"time"
)

// simpleQuery runs every statement of a Query message; the first error
// stops the rest. The caller appends ReadyForQuery.
func (ss *session) simpleQuery(sql string) {
	stmts := split(sql)
	ok := true
	for _, st := range stmts {
		if st.kind == kindEmpty {
			ss.emptyQuery()
			break
		}
		if len(stmts) > 1 && ss.tx == 'I' && !ss.implicit {
			ss.startImplicit()
		}
		if !ss.runStatement(st, nil, nil, 0, true) {
			ok = false
			break
		}
	}
	if ss.implicit {
		ss.endBlock(ok)
	}
}

// runStatement executes one classified statement with its arguments and
// sends its results (with RowDescription when describe is set); false
// when it failed (the error has been sent).
func (ss *session) runStatement(st statement, args []driver.NamedValue, formats []int16, max int64, describe bool) bool {
	if ss.tx == 'E' && !endsFailedBlock(st.kind) {
		ss.errorMsg("ERROR", codeInFailedTx, "current transaction is aborted, commands ignored until end of transaction block")
		return false
	}
	t0 := time.Now()
	rs, tag, err := ss.start(st, args)
	if err != nil {
		ss.sendError(err)
		return false
	}
	if rs == nil {
		ss.commandComplete(tag)
		return true
	}
	defer rs.close()
	if st.kind == kindCopyOut {
		return ss.copyOut(rs, st.copy, t0)
	}
	if err := checkFormats(rs.columns(), formats); err != nil {
		ss.sendError(err)
		return false
	}
	if describe {
		ss.rowDescription(rs.columns(), formats)
	}
	return ss.finishRows(rs, tag, formats, t0)
}

// finishRows streams all of rs and completes the command.
func (ss *session) finishRows(rs resultSet, tag string, formats []int16, t0 time.Time) bool {
	dst := make([]driver.Value, len(rs.columns()))
	n, _, err := ss.writeRows(rs, formats, 0, dst)
	if err != nil {
		ss.srv.metrics.query(outcomeError, time.Since(t0))
		ss.sendError(err)
		return false
	}
	ss.srv.metrics.query(outcomeOK, time.Since(t0))
	ss.commandComplete(rowsTag(tag, n))
	return true
}

// rowsTag is the CommandComplete tag of a statement that returned n rows:
// SELECT counts them, SHOW does not.
func rowsTag(tag string, n int64) string {
	if tag != "SELECT" {
		return tag
	}
	return tag + " " + strconv.FormatInt(n, 10)
}

// endsFailedBlock tells the statements an aborted block still runs.
func endsFailedBlock(k kind) bool {
	return k == kindCommit || k == kindRollback || k == kindRollbackTo
}

// start begins a statement: local ones are answered here (a nil
// resultSet and a tag, or local rows), queries run on DuckDB.
func (ss *session) start(st statement, args []driver.NamedValue) (resultSet, string, error) {
	switch st.kind {
	case kindRefused:
		ss.srv.metrics.query(outcomeRefused, 0)
		return nil, "", st.err
	case kindSet:
		return nil, st.tag, ss.applySet(st)
	case kindShow:
		rs, err := ss.show(st.name)
		return rs, "SHOW", err
	case kindSetConfig:
		rs, err := ss.setConfig(st)
		return rs, "SELECT", err
	case kindBegin:
		switch {
		case ss.implicit: // BEGIN in a Query of several statements: the block so far is its start
			ss.tx, ss.implicit = 'T', false
		case ss.tx == 'I':
			ss.beginBlock()
		}
		return nil, st.tag, nil
	case kindCommit:
		tag := "COMMIT"
		if ss.tx == 'E' {
			tag = "ROLLBACK"
		}
		ss.endBlock(tag == "COMMIT")
		return nil, tag, nil
	case kindRollback:
		ss.endBlock(false)
		return nil, "ROLLBACK", nil
	case kindSavepoint, kindRelease, kindRollbackTo:
		return nil, st.tag, ss.savepointCmd(st)
	case kindDeallocate:
		return nil, st.tag, ss.deallocate(st)
	case kindDiscardAll:
		return nil, st.tag, ss.discardAll()
	case kindNoop:
		return nil, st.tag, nil
	case kindEmpty:
		return nil, "", nil
	case kindCopyOut:
		return ss.query(st.query, args)
	}
	rs, tag, err := ss.query(st.sql, args)
	if err == nil && st.tag == "EXPLAIN" {
		return explainRows(rs), "EXPLAIN", nil
	}
	return rs, tag, err
}

// query runs one query on DuckDB, after the local catalog answers and the
// dialect translation. The tag is SELECT (the row count is appended).
func (ss *session) query(sql string, args []driver.NamedValue) (resultSet, string, error) {
	t0 := time.Now()
	if rs, ok := ss.intercept(sql); ok {
		return rs, "SELECT", nil
	}
	duckSQL, err := ss.translate(sql)
	if err != nil {
		ss.srv.metrics.query(outcomeRefused, time.Since(t0))
		return nil, "", err
	}
	st, err := ss.prepareDuck(duckSQL)
	if err != nil {
		ss.srv.metrics.query(outcomeError, time.Since(t0))
		return nil, "", err
	}
	rs, err := ss.runDuck(st, args)
	if err != nil {
		st.Close()
		ss.srv.metrics.failed(err, time.Since(t0))
		return nil, "", err
	}
	return &closingRows{resultSet: rs, close2: func() { st.Close() }}, "SELECT", nil
}

// closingRows closes the statement after its rows.
type closingRows struct {
	resultSet
	close2 func()
}

func (r *closingRows) close() { r.resultSet.close(); r.close2() }

// translate applies the session rewrites and the dialect.
func (ss *session) translate(sql string) (string, error) {
	sql = ss.rewriteFunctions(sql)
	out, err := ss.srv.cfg.Dialect.translate(sql)
	if err != nil && catalogOnly(sql) {
		return sql, nil
	}
	if err != nil {
		if _, ok := err.(interface{ SQLState() string }); ok {
			return "", err
		}
		return "", errorf(codeNotSupported, err.Error())
	}
	return out, nil
}
