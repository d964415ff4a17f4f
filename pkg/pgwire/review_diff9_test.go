// Review of f1b8cca (pgwire: SASLprep step for step as pg_saslprep): each
// test asserts the correct behaviour and fails on the code it was written
// against.

package pgwire

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

// rvd9Verifier is the SCRAM verifier PostgreSQL 15 stores for password.
func rvd9Verifier(t *testing.T, password string) string {
	t.Helper()
	ctx := context.Background()
	pc, err := pgconn.Connect(ctx, pgtest.Shared(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(ctx)
	const role = "rvd9_saslprep"
	lit := "'" + strings.ReplaceAll(password, "'", "''") + "'"
	q := fmt.Sprintf("SET password_encryption = 'scram-sha-256'; DROP ROLE IF EXISTS %s; CREATE ROLE %s PASSWORD %s", role, role, lit)
	if _, err := pc.Exec(ctx, q).ReadAll(); err != nil {
		t.Fatalf("create role: %v", err)
	}
	res, err := pc.Exec(ctx, fmt.Sprintf("SELECT rolpassword FROM pg_authid WHERE rolname = '%s'; DROP ROLE %s", role, role)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return string(res[0].Rows[0][0])
}

// pg_saslprep maps RFC 3454 table B.1 ("commonly mapped to nothing") to
// nothing, and PostgreSQL's table (src/common/saslprep.c,
// commonly_mapped_to_nothing_ranges) has U+1806 MONGOLIAN TODO SOFT
// HYPHEN, as the RFC's B.1 does (Python's stringprep.in_table_b1 agrees).
// github.com/xdg-go/stringprep's TableB1, which normalizePassword uses,
// lacks it: the only code point where its tables and RFC 3454's differ.
// A password with U+1806 and another non-ASCII character is then
// prepared differently from PostgreSQL's (and libpq's) SASLprep: the
// verifier PostgreSQL 15 stores for it does not accept the password.
func TestDiff9ReviewSASLprepMapsMongolianTodoSoftHyphenToNothing(t *testing.T) {
	for _, password := range []string{
		"\u182e\u1823\u1829\u1806\u182d\u1823\u182f", // Mongolian letters with a todo soft hyphen
		"caf\u00e9\u1806",
	} {
		v := rvd9Verifier(t, password)
		if err := checkPlain("u", v, password); err != nil {
			t.Errorf("%+q against the verifier PostgreSQL 15 stored for it: %v (normalizePassword gives %+q; "+
				"pg_saslprep drops U+1806)", password, err, normalizePassword(password))
		}
	}
}
