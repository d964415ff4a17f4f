package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"snapshot", "--tables", "t", "--target", "x.duckdb"},
		{"snapshot", "--source", "postgres://x@127.0.0.1:1/x", "--tables", "t", "--target", "x.duckdb", "--strategy", "csv"},
		{"snapshot", "--source", "postgres://x@127.0.0.1:1/x", "--tables", " , ", "--target", "x.duckdb"},
		{"serve", "--db", "x.duckdb", "--tls-cert", "c.pem"},
		{"bogus"},
	} {
		var out, errs bytes.Buffer
		if code := run(context.Background(), args, &out, &errs); code != exitUsage {
			t.Errorf("%q: exit %d, want %d\n%s", args, code, exitUsage, errs.String())
		}
		if !strings.HasPrefix(errs.String(), "qpanalytics: ") {
			t.Errorf("%q: error output %q does not name the tool", args, errs.String())
		}
	}
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, &out, &errs); code != 0 || !strings.Contains(out.String(), "snapshot") {
		t.Errorf("--help: exit %d\n%s", code, out.String())
	}
}

// The config file drives a snapshot; a verify then matches, and after the
// source changes it reports the difference with exit code 3.
func TestConfigSnapshotVerify(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Start(t, pgtest.Options{})
	conn, err := pgx.Connect(ctx, db.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE items (id int PRIMARY KEY, name text, price numeric(10,2));
		INSERT INTO items SELECT i, 'item ' || i, i * 1.5 FROM generate_series(1, 1000) i`); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "copy.duckdb")
	cfg := filepath.Join(dir, "qpa.toml")
	if err := os.WriteFile(cfg, []byte("source = \""+db.URL()+"\"\ntables = [\"items\"]\ntarget = \""+target+"\"\nprogress = \"never\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if code := run(ctx, []string{"--config", cfg, "snapshot"}, &out, &errs); code != 0 {
		t.Fatalf("snapshot from config: exit %d\n%s", code, errs.String())
	}
	if !strings.Contains(out.String(), `"table":"public.items","rows":1000`) {
		t.Errorf("snapshot record: %s", out.String())
	}
	out.Reset()
	if code := run(ctx, []string{"--config", cfg, "verify"}, &out, &errs); code != 0 {
		t.Fatalf("verify: exit %d\n%s", code, errs.String())
	}
	if !strings.Contains(out.String(), `"match":true`) {
		t.Errorf("verify record: %s", out.String())
	}
	if _, err := conn.Exec(ctx, `UPDATE items SET price = price + 1 WHERE id = 7`); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errs.Reset()
	if code := run(ctx, []string{"--config", cfg, "verify"}, &out, &errs); code != exitMismatch {
		t.Fatalf("verify after a change: exit %d, want %d\n%s", code, exitMismatch, errs.String())
	}
	if !strings.Contains(out.String(), `"match":false`) || !strings.Contains(out.String(), `"source_moved":true`) {
		t.Errorf("verify record after a change: %s", out.String())
	}
}
