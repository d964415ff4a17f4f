// Attacks on the read-only promise (safesql + pgexec) against a real
// PostgreSQL: each test below failed before its fix of 2026-12-05 (a
// statement the validator accepted ran a refused function, or escaped a
// limit).

package pgexec

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/safesql"
)

func newValidator(t *testing.T, opts safesql.Options) *safesql.Validator {
	t.Helper()
	v, err := safesql.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The hygiene lexer (safesql/hygiene.go skipLineComment) ends a
// "--" comment only at '\n'; PostgreSQL's lexer (and libpg_query's, the same
// scan.l: non_newline = [^\n\r]) also ends it at '\r'. Everything after
// "--\r" is therefore invisible to the operator/keyword chain limit and the
// bracket-depth limit, although the parser reads it as SQL. With default
// options this lets through a 3000-level UNION chain that the documented
// rule ("more than 2048 operators and chaining keywords") refuses.
func TestCarriageReturnEndsLineComment(t *testing.T) {
	v := newValidator(t, safesql.Options{CacheSize: -1})
	body := strings.Repeat(" UNION SELECT 1", 3000)
	if err := v.Validate("SELECT 1 --\n" + body); err == nil {
		t.Fatal("control: the \\n variant should be refused by the chain limit")
	}
	if err := v.Validate("SELECT 1 --\r" + body); err == nil {
		t.Errorf("a 3000-term UNION chain after \"--\\r\" was accepted; the same text after \"--\\n\" is refused " +
			"(hygiene.go skipLineComment ends line comments only at \\n, PostgreSQL also at \\r)")
	}
}

// TestCarriageReturnCommentChild is the child process of
// TestCarriageReturnCommentDoesNotCrash; it does nothing unless SAFETY_SQL_FILE
// is set.
func TestCarriageReturnCommentChild(t *testing.T) {
	f := os.Getenv("SAFETY_SQL_FILE")
	if f == "" {
		t.Skip("child of TestCarriageReturnCommentDoesNotCrash")
	}
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	v := newValidator(t, safesql.Options{MaxLength: 1 << 20, CacheSize: -1})
	err = v.Validate(string(b))
	var r *safesql.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("want a refusal, got %v", err)
	}
	os.Stdout.WriteString("REFUSED: " + r.Error() + "\n")
}

// The same "--\r" blind spot defeats the very protection the
// limits exist for (docs/safesql.md: libpg_query recurses on the C stack
// and an 8 MiB stack overflow kills the process). With MaxLength raised to
// 1 MiB (allowed up to 16 MiB by safesql.Options and by
// `mcpg check --max-length`), "SELECT 1 --\r+1+1+..." (100,000 terms,
// 200 KB) kills the whole process with SIGSEGV inside pg_query's cgo call,
// before any refusal. The same text with "--\n" is refused by the hygiene.
func TestCarriageReturnCommentDoesNotCrash(t *testing.T) {
	body := strings.Repeat("+1", 100000)
	v := newValidator(t, safesql.Options{MaxLength: 1 << 20, CacheSize: -1})
	if err := v.Validate("SELECT 1 --\n" + body); err == nil {
		t.Fatal("control: the \\n variant should be refused")
	}
	f := t.TempDir() + "/q.sql"
	if err := os.WriteFile(f, []byte("SELECT 1 --\r"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCarriageReturnCommentChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SAFETY_SQL_FILE="+f)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "REFUSED:") {
		s := string(out)
		if len(s) > 600 {
			s = s[:600]
		}
		t.Errorf("validating \"SELECT 1 --\\r\" + 100000 × \"+1\" (MaxLength 1 MiB) did not return a refusal; "+
			"the process died: %v\n%s", err, s)
	}
}

// The row and byte caps (MaxRows 100, MaxBytes 32 KiB) apply only
// to the result document. A server error message carries data of any size
// up to about MaxValueBytes+64 KiB (the pre-RowDescription message limit),
// and Run returns it whole in QueryError.Message (mcpserver's errorText
// passes it to the agent unchanged). One statement returns 100,000 rows'
// worth of data (~590 KB) through the error channel.
func TestErrorMessageCut(t *testing.T) {
	pool := newPool(t, 1, true)
	v := newValidator(t, safesql.Options{})
	e, err := New(pool, v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sql := `SELECT (SELECT string_agg(g::text, ',') FROM generate_series(1, 100000) g)::int`
	_, err = e.Run(testCtx(t), sql, nil, nil)
	var qe *QueryError
	if !errors.As(err, &qe) {
		t.Fatalf("want a QueryError, got %v", err)
	}
	if n := len(qe.Error()); n > DefaultMaxBytes {
		t.Errorf("error text is %d bytes (MaxBytes %d, MaxRows %d); it holds the values of all 100000 rows, "+
			"e.g. %q...", n, DefaultMaxBytes, DefaultMaxRows, qe.Message[:80])
	}
}

// Finding 2b (same root: the allowlist is by name, but PostgreSQL resolves
// operators through search_path). A_Expr is checked only for
// OPERATOR(schema.op); an unqualified operator that exists only as a user
// operator in public is accepted and runs its (user-defined, volatile)
// function. docs/safesql.md's residual risks mention overloading of
// built-in operator names with other argument types; this operator name is
// not built-in at all.
func TestUserOperatorRefused(t *testing.T) {
	a := admin(t)
	mustExec(t, a, `CREATE OR REPLACE FUNCTION public.safety_op_fn(int, int) RETURNS int
		LANGUAGE plpgsql VOLATILE AS $$
		BEGIN
			PERFORM pg_advisory_lock(434343);
			RETURN 4343;
		END $$;
		DROP OPERATOR IF EXISTS public.##> (int, int);
		CREATE OPERATOR public.##> (LEFTARG = int, RIGHTARG = int, FUNCTION = public.safety_op_fn)`)
	t.Cleanup(func() {
		mustExec(t, admin(t), "DROP OPERATOR IF EXISTS public.##> (int, int); DROP FUNCTION IF EXISTS public.safety_op_fn(int, int)")
	})
	pool := newPool(t, 1, true)
	v := newValidator(t, safesql.Options{})
	if err := v.Validate("SELECT public.safety_op_fn(1, 2)"); err == nil {
		t.Fatal("control: the function by name should be refused")
	}
	e, err := New(pool, v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(testCtx(t), "SELECT 1 ##> 2", nil, nil)
	if err == nil && strings.Contains(string(res.JSON), "4343") {
		t.Errorf("SELECT 1 ##> 2 ran the user-defined function behind public.##>: %s", res.JSON)
	}
	if n := queryInt(t, a, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 434343 AND granted"); n != 0 {
		t.Errorf("after Run returned, a pooled connection still holds session advisory lock 434343")
	}
}

// docs/safesql.md: the validator parses with
// standard_conforming_strings on, and "the executor must keep the default
// (on)". It does not: sessionParams (pool.go) sets no
// standard_conforming_strings, so a database, role or server configured
// with it off decides. Then a backslash before a quote means different
// things to the validator and to the server, and a refused function can be
// hidden inside what the validator reads as a string literal. Here
// pg_advisory_lock (refused by name) runs, and its session lock outlives
// the call on the pooled connection.
func TestStandardConformingStringsPinned(t *testing.T) {
	a := admin(t)
	mustExec(t, a, "DROP DATABASE IF EXISTS safety_scs_off")
	mustExec(t, a, "CREATE DATABASE safety_scs_off")
	mustExec(t, a, "ALTER DATABASE safety_scs_off SET standard_conforming_strings = off")
	t.Cleanup(func() { mustExec(t, admin(t), "DROP DATABASE IF EXISTS safety_scs_off WITH (FORCE)") })

	pool, err := NewPool(testCtx(t), pgtest.Shared(t).DBURL("safety_scs_off"), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	v := newValidator(t, safesql.Options{})
	if err := v.Validate("SELECT pg_advisory_lock(515151)"); err == nil {
		t.Fatal("control: pg_advisory_lock should be refused")
	}
	// Validator (backslash is an ordinary character):
	//   SELECT 'x\' , ' , pg_advisory_lock(515151) , ' AS a   -- comment
	// Server with standard_conforming_strings off (\' is an escaped quote):
	//   SELECT 'x\' , ' , pg_advisory_lock(515151) , ' AS a -- ' AS b
	sql := "SELECT 'x\\' , ' , pg_advisory_lock(515151) , ' AS a -- ' AS b\n"
	if err := v.Validate(sql); err != nil {
		t.Fatalf("the validator should accept the text as two string literals: %v", err)
	}
	e, err := New(pool, v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(testCtx(t), sql, nil, nil)
	t.Logf("result: %s err: %v", res.JSON, err)
	var pids []int32
	rows, err := a.Query(testCtx(t), "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objid = 515151 AND granted")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p int32
		_ = rows.Scan(&p)
		pids = append(pids, p)
	}
	if len(pids) > 0 {
		t.Errorf("the validated text ran pg_advisory_lock(515151) on the server; backend %v still holds it after Run "+
			"(result %s)", pids, res.JSON)
	}
}

// Same root cause: client_encoding is not pinned either (pgx
// does not send it; sessionParams has none), so a database or role default
// such as SJIS decides how the server decodes the validated UTF-8 bytes.
// In "E'ぁ\' ...", UTF-8 ぁ is E3 81 81; read as SJIS, E3 81 is one
// character and 81 5C (the backslash) another, so the backslash no longer
// escapes the quote for the server while it does for the validator.
func TestClientEncodingPinned(t *testing.T) {
	a := admin(t)
	mustExec(t, a, "DROP DATABASE IF EXISTS safety_sjis")
	mustExec(t, a, "CREATE DATABASE safety_sjis")
	mustExec(t, a, "ALTER DATABASE safety_sjis SET client_encoding = 'SJIS'")
	t.Cleanup(func() { mustExec(t, admin(t), "DROP DATABASE IF EXISTS safety_sjis WITH (FORCE)") })

	pool, err := NewPool(testCtx(t), pgtest.Shared(t).DBURL("safety_sjis"), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	v := newValidator(t, safesql.Options{})
	// Validator: one E'' literal, then a comment.
	// Server (SJIS): E'..' , pg_advisory_lock(616161) , ' AS a -- '
	sql := "SELECT E'ぁ\\' , pg_advisory_lock(616161) , ' AS a -- '\n"
	if err := v.Validate(sql); err != nil {
		t.Fatalf("the validator should accept the text as one string literal: %v", err)
	}
	e, err := New(pool, v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(testCtx(t), sql, nil, nil)
	t.Logf("result: %s err: %v", res.JSON, err)
	if n := queryInt(t, a, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 616161 AND granted"); n != 0 {
		t.Errorf("the validated text ran pg_advisory_lock(616161) on the server, and the lock outlives Run (result %s)", res.JSON)
	}
}

// libpg_query is PostgreSQL 17's parser, the server here is 15.
// PG 16/17 SQL/JSON syntax (JSON_VALUE, JSON_QUERY, JSON_EXISTS, JSON_ARRAY,
// JSON_SCALAR, JSON_SERIALIZE, JSON_ARRAYAGG, JSON(...)) is a JsonFuncExpr /
// Json*Constructor node to the validator, which is allowed without any
// function-name check; PostgreSQL 15 has no such syntax and parses the same
// text as an ordinary call of a function named json_value etc., resolved
// through search_path, i.e. a user-defined function. So "every
// user-defined function is refused" did not hold before 2026-12-05, and
// whatever that function does ran: here it takes a session-level advisory
// lock, which survives the envelope's ROLLBACK. Now the validator refuses
// syntax newer than Options.ServerVersion (0: PostgreSQL 15).
func TestNewerSyntaxRefusedOnOlderServer(t *testing.T) {
	a := admin(t)
	if n := queryInt(t, a, "SELECT current_setting('server_version_num')::int"); n >= 170000 {
		t.Skip("the server has the SQL/JSON syntax itself")
	}
	mustExec(t, a, `CREATE OR REPLACE FUNCTION public.json_value(j jsonb, p text) RETURNS text
		LANGUAGE plpgsql VOLATILE AS $$
		BEGIN
			PERFORM pg_advisory_lock(424242);
			RETURN 'user function ran';
		END $$`)
	t.Cleanup(func() { mustExec(t, admin(t), "DROP FUNCTION IF EXISTS public.json_value(jsonb, text)") })

	pool := newPool(t, 1, true)
	v := newValidator(t, safesql.Options{})
	// The same function called by its name is refused, as documented.
	for _, c := range []string{`SELECT public.json_value(jsonb '{"a":1}', '$.a')`, `SELECT "json_value"(jsonb '{"a":1}', '$.a')`} {
		if err := v.Validate(c); err == nil {
			t.Fatalf("control: %s should be refused", c)
		}
	}
	e, err := New(pool, v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sql := `SELECT JSON_VALUE(jsonb '{"a":1}', '$.a')`
	res, err := e.Run(testCtx(t), sql, nil, nil)
	if err == nil && strings.Contains(string(res.JSON), "user function ran") {
		t.Errorf("%s was accepted and ran the user-defined function public.json_value: %s", sql, res.JSON)
	}
	if n := queryInt(t, a, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 424242 AND granted"); n != 0 {
		var locked bool
		if err := a.QueryRow(testCtx(t), "SELECT pg_try_advisory_lock(424242)").Scan(&locked); err != nil {
			t.Fatal(err)
		}
		t.Errorf("after Run returned, a pooled connection still holds a session advisory lock "+
			"(DestroyedConns=%d, another session's pg_try_advisory_lock: %v)", e.DestroyedConns(), locked)
	}
}

// MaxBytes caps the document at 32 KiB, but the executor reads
// every DataRow whole into memory, accepting rows up to
// 2 + ncols*(4+MaxValueBytes) bytes (protocol.go setMaxBodyLen after
// RowDescription). A statement of ~3 KB makes one call allocate hundreds of
// MB in the client (about 1 GB with ~1000 columns, the server's limit), for
// a document of a few hundred bytes; N concurrent calls took N times that
// before 2026-12-05. Now a row is read only up to one maximal value and a
// whole document beyond its column headers (rowBound).
func TestWideRowBounded(t *testing.T) {
	pool := newPool(t, 1, true)
	v := newValidator(t, safesql.Options{})
	e, err := New(pool, v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cols := make([]string, 120)
	for i := range cols {
		cols[i] = "r"
	}
	sql := "SELECT " + strings.Join(cols, ",") + " FROM (SELECT repeat('x', 1000000) AS r) s"
	run(t, e, "SELECT 1") // warm up
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = e.Run(testCtx(t), sql, nil, nil)
	runtime.ReadMemStats(&after)
	var qe *QueryError
	if !errors.As(err, &qe) || qe.SQLState != codeLimitExceeded {
		t.Fatalf("a 120 MB row: %v, want the row refused with %s", err, codeLimitExceeded)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("one call with MaxBytes %d allocated %d MB in the client", DefaultMaxBytes, alloc>>20)
	}
	// A row of one large value and small ones is still read.
	if _, err := e.Run(testCtx(t), "SELECT repeat('x', 500000) AS big, 1 AS small", nil, nil); err != nil {
		t.Errorf("a row of one 500 kB value: %v", err)
	}
}

// TestOperatorsOfPostgreSQL checks safesql's list of built-in operator
// names against the server's pg_catalog, both ways: every operator there
// is accepted, and a name outside it is not.
func TestOperatorsOfPostgreSQL(t *testing.T) {
	a := admin(t)
	rows, err := a.Query(testCtx(t), "SELECT DISTINCT oprname FROM pg_catalog.pg_operator WHERE oprnamespace = 'pg_catalog'::regnamespace")
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for rows.Next() {
		var op string
		if err := rows.Scan(&op); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, op)
	}
	if err := rows.Err(); err != nil || len(ops) < 50 {
		t.Fatalf("%d operators: %v", len(ops), err)
	}
	v := newValidator(t, safesql.Options{CacheSize: -1})
	for _, op := range ops {
		if err := v.Validate("SELECT 1 ORDER BY 1 USING " + op); err != nil {
			t.Errorf("built-in operator %s refused: %v", op, err)
		}
	}
	if err := v.Validate("SELECT 1 ORDER BY 1 USING ##>"); err == nil {
		t.Error("##>, which pg_catalog does not have, was accepted")
	}
}

// TestAttributeFunctionsOfPostgreSQL checks safesql's list of functions
// that attribute notation can call ((1).f and rel.f run f(1) and f(rel)
// when there is no column f) against the server's pg_catalog: for each,
// the field selection is refused exactly when the plain call is.
func TestAttributeFunctionsOfPostgreSQL(t *testing.T) {
	a := admin(t)
	rows, err := a.Query(testCtx(t), `SELECT DISTINCT proname::text FROM pg_catalog.pg_proc p
		WHERE pronamespace = 'pg_catalog'::regnamespace AND pronargs >= 1 AND pronargs - pronargdefaults <= 1
		AND proargtypes[0] <> 'pg_catalog.internal'::regtype
		AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_type t WHERE t.typname = p.proname AND t.typnamespace = 'pg_catalog'::regnamespace)`)
	if err != nil {
		t.Fatal(err)
	}
	var fns []string
	for rows.Next() {
		var f string
		if err := rows.Scan(&f); err != nil {
			t.Fatal(err)
		}
		fns = append(fns, f)
	}
	if err := rows.Err(); err != nil || len(fns) < 500 {
		t.Fatalf("%d functions: %v", len(fns), err)
	}
	v := newValidator(t, safesql.Options{CacheSize: -1})
	refused := 0
	for _, f := range fns {
		q := `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
		callErr := v.Validate("SELECT " + q + "(1)")
		attrErr := v.Validate("SELECT (1)." + q)
		if (callErr == nil) != (attrErr == nil) {
			t.Errorf("%s: call %v, attribute notation %v", f, callErr, attrErr)
		}
		if attrErr != nil {
			refused++
		}
	}
	if refused < 100 {
		t.Errorf("only %d of %d refused", refused, len(fns))
	}
}
