// Cases the first fixes of 2026-12-05 (948c8bf..15e9e3f) got wrong, found
// by a review of that diff, against a real PostgreSQL 15; each failed
// before its fix in the commit that adds this file.

package pgexec

import (
	"strings"
	"testing"

	"github.com/qpkit/qpkit/pkg/safesql"
)

// The version gating (functionSince: "the allowlisted names PostgreSQL
// 15's pg_catalog lacks, less the names of syntax and types") misses
// to_regconfig: it is on the allowlist, PostgreSQL 15 has no such function,
// so on 15 the call resolves through search_path to a user function.
func TestToRegconfigUserFunction(t *testing.T) {
	a := admin(t)
	if n := queryInt(t, a, "SELECT count(*) FROM pg_proc WHERE proname = 'to_regconfig' AND pronamespace = 'pg_catalog'::regnamespace"); n != 0 {
		t.Skip("the server has pg_catalog.to_regconfig")
	}
	mustExec(t, a, `CREATE OR REPLACE FUNCTION public.to_regconfig(text) RETURNS text
		LANGUAGE sql AS $$ SELECT 'user function ran' $$`)
	t.Cleanup(func() { mustExec(t, admin(t), "DROP FUNCTION IF EXISTS public.to_regconfig(text)") })
	pool := newPool(t, 1, true)
	v := newValidator(t, safesql.Options{}) // ServerVersion 0: PostgreSQL 15
	e, err := New(pool, v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sql := `SELECT to_regconfig('english')`
	res, err := e.Run(testCtx(t), sql, nil, nil)
	if err == nil && strings.Contains(string(res.JSON), "user function ran") {
		t.Errorf("%s was accepted and ran the user-defined function public.to_regconfig: %s", sql, res.JSON)
	}
}

// Names of syntax left out of the gating are callable as ordinary
// functions when quoted: "coalesce"(...) is a FuncCall named coalesce
// (allowlisted), and pg_catalog has no function coalesce in any release,
// so PostgreSQL runs a user function of that name found on search_path.
func TestQuotedSyntaxNameUserFunction(t *testing.T) {
	a := admin(t)
	mustExec(t, a, `CREATE OR REPLACE FUNCTION public."coalesce"(int) RETURNS text
		LANGUAGE sql AS $$ SELECT 'user function ran' $$`)
	t.Cleanup(func() { mustExec(t, admin(t), `DROP FUNCTION IF EXISTS public."coalesce"(int)`) })
	pool := newPool(t, 1, true)
	v := newValidator(t, safesql.Options{})
	e, err := New(pool, v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sql := `SELECT "coalesce"(1)`
	res, err := e.Run(testCtx(t), sql, nil, nil)
	if err == nil && strings.Contains(string(res.JSON), "user function ran") {
		t.Errorf("%s was accepted and ran the user-defined function public.coalesce: %s", sql, res.JSON)
	}
}

// MaxBytes: "Rows that would exceed it are left out and the result says
// truncated by bytes" (executor.go). The new wire bound (rowBound:
// maxValue+maxBytes for the whole row) turns a row of two 600 kB values,
// each within MaxValueBytes, into a 54000 error that also loses the rows
// before it; before the change the call returned row 1, truncated by bytes.
func TestWideRowAfterSmallRowTruncates(t *testing.T) {
	pool := newPool(t, 1, true)
	v := newValidator(t, safesql.Options{})
	e, err := New(pool, v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sql := `SELECT g, CASE WHEN g > 1 THEN repeat('x', 600000) END AS a, CASE WHEN g > 1 THEN repeat('y', 600000) END AS b
		FROM generate_series(1, 2) g`
	res, err := e.Run(testCtx(t), sql, nil, nil)
	if err != nil {
		t.Fatalf("two values of 600 kB (MaxValueBytes 1 MiB) after a small row: %v; want row 1, truncated by bytes", err)
	}
	if res.Rows != 1 || res.TruncatedBy != "bytes" {
		t.Errorf("rows %d truncated_by %q, want 1 row truncated by bytes", res.Rows, res.TruncatedBy)
	}
}
