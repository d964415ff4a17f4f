package proxy_test

import "testing"

// set_config(..., false) that the statement only defines or never runs:
// setConfigCode masks comments and the dollar-quoted bodies outside DO, but
// not a comment inside a DO body (the DO body is skipped whole), nor a
// function body in SQL-standard form (RETURN ... / BEGIN ATOMIC ... END).
// PostgreSQL's session settings do not change;
// through the proxy in transaction mode the client's recorded settings do,
// and once its next transaction lands on a server another client used, the
// replay applies them (SHOW work_mem answers the value that was never set).
func TestDiff6ReviewSetConfigNotRunReplayed(t *testing.T) {
	execDirect(t, "drop function if exists zz6_ret(); drop function if exists zz6_atomic()")
	defer execDirect(t, "drop function if exists zz6_ret(); drop function if exists zz6_atomic()")
	cases := []struct{ name, sql string }{
		{"comment in a DO body", "do $$ begin\n  -- perform set_config('work_mem', '21MB', false);\n  perform 1;\nend $$"},
		{"RETURN body", "create or replace function zz6_ret() returns text language sql return set_config('work_mem', '22MB', false)"},
		{"BEGIN ATOMIC body", "create or replace function zz6_atomic() returns text language sql begin atomic select set_config('work_mem', '23MB', false); end"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			z5CompareMulti(t, 2, nil, []z5CStep{
				z5C(0, z5(query(c.sql))),
				z5C(1, z5(query("select 1"))), // the other client uses the server
				z5C(0, z5(query("show work_mem"))),
			}, z5TxSetups[:2])
		})
	}
}
