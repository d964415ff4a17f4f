package proxy_test

import "testing"

// A BEGIN ATOMIC body of several statements: definesRoutine skips only
// the first piece splitStatementsEsc cuts at the body's semicolons; the
// later pieces ("select set_config(..., false)", "end") are taken for
// statements of their own, so a set_config the function only defines is
// recorded and replayed on the client's next server. PostgreSQL's
// session is unchanged (SHOW work_mem answers the default).
func TestDiff7ReviewBeginAtomicLaterStatementReplayed(t *testing.T) {
	execDirect(t, "drop function if exists zz7_atomic2()")
	defer execDirect(t, "drop function if exists zz7_atomic2()")
	sql := "create or replace function zz7_atomic2() returns text language sql begin atomic select 1; select set_config('work_mem', '25MB', false); end"
	z5CompareMulti(t, 2, nil, []z5CStep{
		z5C(0, z5(query(sql))),
		z5C(1, z5(query("select 1"))), // the other client uses the server
		z5C(0, z5(query("show work_mem"))),
	}, z5TxSetups[:1])
}

// A DO whose dollar quote never ends (`do $reset$`: "res" lets it past the
// settings filter) panicked in setConfigCode's slicing, and the panic
// left the session's lock held: the client got no answer and Shutdown
// never returned. PostgreSQL answers 42601, and the session goes on.
func TestDiff7ReviewUnterminatedDollarInDo(t *testing.T) {
	compareTraces(t, 2, func(t *testing.T, addr string) []string {
		c := traceDial(t, addr, nil)
		return []string{c.query(t, "do $reset$"), c.query(t, "do $r$ begin perform 1; end"), c.query(t, "select 1")}
	})
}
