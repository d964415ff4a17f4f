package proxy

import (
	"slices"
	"testing"
)

// The n-th statement splitStatements finds must be the one PostgreSQL
// answers n-th: settings are matched with CommandCompletes by position.
func TestSplitStatements(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"select 1; select 2", []string{"select 1", "select 2"}},
		{"select 1;; ;select 2;", []string{"select 1", "select 2"}},
		{"select ';'; select \"a;b\"", []string{"select ';'", `select "a;b"`}},
		{"select 'it''s;'; set a = 1", []string{"select 'it''s;'", "set a = 1"}},
		{`select E'\';'; set a = 1`, []string{`select E'\';'`, "set a = 1"}},
		{`select e'\\'; set a = 1`, []string{`select e'\\'`, "set a = 1"}},
		{`select some'\'; set a = 1`, []string{`select some'\'`, "set a = 1"}}, // not an E string: some'\' is "some" then '\'
		{"do $$ begin perform 1; end $$; set a = 1", []string{"do $$ begin perform 1; end $$", "set a = 1"}},
		{"do $f$ select '$$;'; $f$; set a = 1", []string{"do $f$ select '$$;'; $f$", "set a = 1"}},
		{"select $1; set a = 1", []string{"select $1", "set a = 1"}},
		{"select a$b; set a = 1", []string{"select a$b", "set a = 1"}},
		{"select 1; /* c; */ ; -- d;\n set a = 1", []string{"select 1", "-- d;\n set a = 1"}},
		{"select 1 /* a /* b; */ c; */; set a = 1", []string{"select 1 /* a /* b; */ c; */", "set a = 1"}},
		{"select 1; -- only a comment", []string{"select 1"}},
		{"select 1 -- x\r; set a = 1", []string{"select 1 -- x", "set a = 1"}},
		{`select 'a\'; set a = 1`, []string{`select 'a\'`, "set a = 1"}}, // standard_conforming_strings on
		{"/* nothing */", nil},
		{"select 'open;", []string{"select 'open;"}},
		{"do $$ open;", []string{"do $$ open;"}},
	} {
		if got := splitStatements(tc.sql); !slices.Equal(got, tc.want) {
			t.Errorf("splitStatements(%q) = %q, want %q", tc.sql, got, tc.want)
		}
	}
}

// Transaction control is found with the statement's place in its text.
func TestVarOpsTransactionControl(t *testing.T) {
	ops := varOps(`begin; SET work_mem = '1MB'; savepoint A; Rollback To Savepoint "B"; release a; rollback work to x; end; abort; select 1; commit`, false)
	type short struct {
		tx  txOp
		key string
		idx int
	}
	var got []short
	for _, op := range ops {
		got = append(got, short{op.tx, op.key, op.idx})
	}
	want := []short{{txNone, "work_mem", 1}, {txSavepoint, "a", 2}, {txRollbackTo, `B`, 3}, {txRelease, "a", 4},
		{txRollbackTo, "x", 5}, {txCommit, "", 6}, {txRollback, "", 7}, {txCommit, "", 9}}
	if !slices.Equal(got, want) {
		t.Errorf("varOps = %+v\nwant %+v", got, want)
	}
	forms := varOps("set a=1; /* c */ SET b TO 2; -- d\nset local c = 3; reset session authorization; set session authorization x; discard all; reset all", false)
	type form struct {
		key         string
		reset, disc bool
		tx          txOp
		idx         int
	}
	var fgot []form
	for _, op := range forms {
		fgot = append(fgot, form{op.key, op.reset, op.discard, op.tx, op.idx})
	}
	fwant := []form{{"a", false, false, txNone, 0}, {"b", false, false, txNone, 1}, {"", false, false, txIgnore, 2},
		{"session_authorization", true, false, txNone, 3}, {"session_authorization", false, false, txNone, 4},
		{"", true, true, txNone, 5}, {"", true, false, txNone, 6}}
	if !slices.Equal(fgot, fwant) {
		t.Errorf("varOps of SET forms = %+v\nwant %+v", fgot, fwant)
	}
	if got := varOps(`select 'x\'; set a = 1; select '`, true); len(got) != 0 {
		t.Errorf("with backslash escapes, a SET inside a string: %+v", got)
	}
	if varOps("select abalance from pgbench_accounts where aid = $1", false) != nil {
		t.Error("a select without such words has ops")
	}
}

// A guess (statements the proxy could not match with their answers)
// marks the server unknown until its transaction has ended, also when a
// COMMIT then keeps the changes: the next client on it must get RESET
// ALL and its own settings replayed.
func TestUnsureUntilTransactionEnds(t *testing.T) {
	s := &session{vars: vars{}, sst: newServerState(), rename: true}
	commit := &entry{kind: kQuery, ops: varOps("commit", false)}
	set := &entry{kind: kQuery, ops: varOps("set work_mem = '1MB'", false)}
	s.txStatus = 'T'
	s.ran(set, []byte("SET"))
	s.ran(&entry{kind: kQuery}, []byte("RESET")) // a RESET the text matching missed
	s.endOfStatement()
	if !s.unsureVars {
		t.Fatal("a settings tag no statement explains left the proxy sure")
	}
	s.ran(commit, []byte("COMMIT"))
	if s.sst.varsKey != unknownVars {
		t.Errorf("after COMMIT the server's settings are taken as %q", s.sst.varsKey)
	}
	if s.vars["work_mem"] == "" {
		t.Error("the committed SET is not the client's")
	}
	s.txStatus = 'I'
	s.endOfStatement()
	if s.sst.varsKey != unknownVars || s.unsureVars {
		t.Errorf("after the transaction: server %q, unsure %v", s.sst.varsKey, s.unsureVars)
	}
	// The next transaction is matched again.
	s.sst.varsKey = s.varsKey
	s.ran(&entry{kind: kQuery, ops: varOps("set work_mem = '2MB'", false)}, []byte("SET"))
	s.endOfStatement()
	if s.sst.varsKey != s.varsKey || s.unsureVars {
		t.Errorf("a matched SET after the guess: server %q, client %q, unsure %v", s.sst.varsKey, s.varsKey, s.unsureVars)
	}
}
