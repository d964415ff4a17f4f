package main

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

func TestServeStrictRole(t *testing.T) {
	db := pgtest.Shared(t)
	// The cluster's superuser: refused with --strict-role.
	code, _, errs := call(t, "", "serve", "--database-url", db.URL(), "--strict-role")
	if code != exitUsage || !strings.Contains(errs, "--strict-role: role \"postgres\" is a superuser") || strings.Count(errs, "\n") != 1 {
		t.Errorf("superuser, strict: exit %d, stderr %q", code, errs)
	}
	// Without it, a loud warning and the server runs.
	_, stop := serving(t, "--database-url", db.URL(), "--http", "127.0.0.1:0")
	if code, errs := stop(); code != exitOK || !strings.Contains(errs, "level=WARN msg=\"DANGEROUS DATABASE ROLE: role \\\"postgres\\\" is a superuser") {
		t.Errorf("superuser: exit %d, stderr %s", code, errs)
	}
	// A SELECT-only role starts with --strict-role, without a warning.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP ROLE IF EXISTS mcpg_reader; CREATE ROLE mcpg_reader LOGIN; GRANT pg_read_all_data TO mcpg_reader`); err != nil {
		t.Fatal(err)
	}
	url := strings.Replace(db.URL(), "postgres@", "mcpg_reader@", 1)
	_, stop = serving(t, "--database-url", url, "--http", "127.0.0.1:0", "--strict-role")
	if code, errs := stop(); code != exitOK || strings.Contains(errs, "WARN") {
		t.Errorf("reader, strict: exit %d, stderr %s", code, errs)
	}
}
