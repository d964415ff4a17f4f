// Transaction blocks: what ROLLBACK, ROLLBACK TO SAVEPOINT and the end of a
// block put back (settings changed by SET, SET LOCAL), as PostgreSQL does.

package duckwire

import (
	"fmt"
	"maps"
	"strings"
)

// txBlock is the open transaction block's memory: the settings at BEGIN,
// the session values that SET LOCAL settings return to at its end, and its
// savepoints, innermost last.
type txBlock struct {
	begin      map[string]string
	local      map[string]string
	savepoints []savepoint
}

// unsetSetting marks, in txBlock.local, a setting that did not
// exist before its SET LOCAL.
const unsetSetting = "\x00unset"

type savepoint struct {
	name  string
	vals  map[string]string
	local map[string]string
}

const (
	codeNoActiveTx  = "25P01"
	codeNoSavepoint = "3B001"
	codeActiveTx    = "25001"
)

// beginBlock starts a transaction block.
func (ss *session) beginBlock() {
	ss.tx = 'T'
	ss.block = txBlock{begin: maps.Clone(ss.settings.vals), local: map[string]string{}}
}

// startImplicit starts the implicit block of a Query with several
// statements: status stays 'I', but SET LOCAL lasts to its end, DISCARD
// ALL is refused and an error undoes its settings.
func (ss *session) startImplicit() {
	ss.beginBlock()
	ss.tx, ss.implicit = 'I', true
}

// inBlock tells whether a block, explicit or implicit, is open.
func (ss *session) inBlock() bool { return ss.tx != 'I' || ss.implicit }

// endBlock ends the block: commit keeps plain SETs and undoes SET LOCAL,
// a rollback puts back every setting as it was at BEGIN.
func (ss *session) endBlock(commit bool) {
	if ss.inBlock() {
		if commit {
			for k, v := range ss.block.local {
				ss.restoreSetting(k, v)
			}
		} else {
			ss.restoreSettings(ss.block.begin)
		}
	}
	ss.tx, ss.implicit = 'I', false
	ss.block = txBlock{}
	ss.dropPortals()
}

// savepointCmd runs SAVEPOINT, RELEASE or ROLLBACK TO.
func (ss *session) savepointCmd(st statement) error {
	if ss.tx == 'I' {
		what := map[kind]string{kindSavepoint: "SAVEPOINT", kindRelease: "RELEASE SAVEPOINT", kindRollbackTo: "ROLLBACK TO SAVEPOINT"}[st.kind]
		return errorf(codeNoActiveTx, what+" can only be used in transaction blocks")
	}
	b := &ss.block
	if st.kind == kindSavepoint {
		b.savepoints = append(b.savepoints, savepoint{name: st.name, vals: maps.Clone(ss.settings.vals), local: maps.Clone(b.local)})
		return nil
	}
	i := len(b.savepoints) - 1
	for i >= 0 && b.savepoints[i].name != st.name {
		i--
	}
	if i < 0 {
		return errorf(codeNoSavepoint, fmt.Sprintf("savepoint %q does not exist", st.name))
	}
	if st.kind == kindRelease {
		b.savepoints = b.savepoints[:i]
		return nil
	}
	sp := b.savepoints[i]
	b.savepoints = b.savepoints[:i+1]
	ss.restoreSettings(sp.vals)
	b.local = maps.Clone(sp.local)
	ss.tx = 'T'
	return nil
}

// restoreSettings puts back every setting that differs from vals; a
// custom setting vals lacks (made since) stays defined with the value ”,
// as PostgreSQL keeps a placeholder it has seen.
func (ss *session) restoreSettings(vals map[string]string) {
	for k := range ss.settings.vals {
		if _, ok := vals[k]; !ok {
			ss.forgetSetting(k)
		}
	}
	for k, v := range vals {
		ss.restoreSetting(k, v)
	}
}

// forgetSetting undoes the SET that made k known. A custom setting (a
// dotted name) stays as an empty placeholder, as in PostgreSQL. A
// built-in one this server keeps no value for (work_mem) becomes unknown
// again, as before the SET: PostgreSQL would go back to its default,
// which this server cannot know, where an empty value would be wrong.
func (ss *session) forgetSetting(k string) {
	if strings.Contains(k, ".") {
		ss.settings.set(k, "")
		return
	}
	delete(ss.settings.vals, k)
	delete(ss.settings.names, k)
}

// restoreSetting sets k back to v through setOne, so that DuckDB's time
// zone follows and a reported setting is sent as ParameterStatus.
func (ss *session) restoreSetting(k, v string) {
	if v == unsetSetting {
		ss.forgetSetting(k)
		return
	}
	if cur, ok := ss.settings.vals[k]; ok && cur == v {
		return
	}
	if err := ss.setOne(ss.settings.canonical(k), v); err != nil {
		// A value that was accepted once; keep it even if a check refuses.
		ss.settings.set(k, v)
	}
}

// deallocate runs DEALLOCATE name and DEALLOCATE ALL (the unnamed
// statement stays, as in PostgreSQL).
func (ss *session) deallocate(st statement) error {
	if st.name == "" {
		for name, ps := range ss.stmts {
			if name != "" {
				ps.close()
				delete(ss.stmts, name)
			}
		}
		return nil
	}
	ps, ok := ss.stmts[st.name]
	if !ok || st.name == "" {
		return errorf(codeUndefinedPStmt, fmt.Sprintf("prepared statement %q does not exist", st.name))
	}
	ps.close()
	delete(ss.stmts, st.name)
	return nil
}

// discardAll runs DISCARD ALL: outside a block only; portals, prepared
// statements and settings go back to the session's start.
func (ss *session) discardAll() error {
	if ss.inBlock() {
		return errorf(codeActiveTx, "DISCARD ALL cannot run inside a transaction block")
	}
	ss.dropPortals()
	if err := ss.deallocate(statement{}); err != nil {
		return err
	}
	return ss.applySet(statement{kind: kindSet, reset: true})
}
