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
	ops := varOps(`begin; SET work_mem = '1MB'; savepoint A; Rollback To Savepoint "B"; release a; rollback work to x; end; abort; select 1; commit`)
	type short struct {
		tx  txOp
		key string
		idx int
	}
	var got []short
	for _, op := range ops {
		got = append(got, short{op.tx, op.key, op.idx})
	}
	want := []short{{txNone, "work_mem", 1}, {txSavepoint, "a", 2}, {txRollbackTo, `"B`, 3}, {txRelease, "a", 4},
		{txRollbackTo, "x", 5}, {txCommit, "", 6}, {txRollback, "", 7}, {txCommit, "", 9}}
	if !slices.Equal(got, want) {
		t.Errorf("varOps = %+v\nwant %+v", got, want)
	}
	if varOps("select abalance from pgbench_accounts where aid = $1") != nil {
		t.Error("a select without such words has ops")
	}
}
