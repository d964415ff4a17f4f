package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

// These tests drive scripts/load-tpch against a throwaway cluster with a
// freshly built tpchgen.

func buildTpchgen(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tpchgen")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func loadTpch(t *testing.T, tpchgen string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command("../../scripts/load-tpch", args...)
	cmd.Env = append(os.Environ(), "TPCHGEN="+tpchgen)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), o.String(), e.String()
	}
	if err != nil {
		t.Fatalf("load-tpch: %v", err)
	}
	return 0, o.String(), e.String()
}

func psql(t *testing.T, url, sql string) string {
	t.Helper()
	out, err := exec.Command("psql", "-X", "-Atc", sql, url).CombinedOutput()
	if err != nil {
		t.Fatalf("psql %q: %v\n%s", sql, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestLoadTpch(t *testing.T) {
	if _, err := exec.LookPath("psql"); err != nil {
		t.Fatal("psql is not installed (Debian package postgresql-client)")
	}
	bin := buildTpchgen(t)
	db := pgtest.Start(t, pgtest.Options{})
	url := db.URL()

	code, out, errs := loadTpch(t, bin, "--sf", "0.01", "--jobs", "2", "--database-url", url)
	if code != 0 {
		t.Fatalf("load exited %d\n%s%s", code, out, errs)
	}
	for table, rows := range map[string]string{"lineitem": "60175", "orders": "15000", "partsupp": "8000", "part": "2000", "customer": "1500", "supplier": "100", "nation": "25", "region": "5"} {
		if !regexp.MustCompile(`(?m)^` + table + `\s+` + rows + `\s+[0-9.]+$`).MatchString(out) {
			t.Errorf("summary lacks %s with %s rows:\n%s", table, rows, out)
		}
		if got := psql(t, url, "select count(*) from "+table); got != rows {
			t.Errorf("%s holds %s rows, want %s", table, got, rows)
		}
	}
	if got := psql(t, url, "select count(*) from pg_indexes where indexname = 'lineitem_part_supp_idx' or tablename = 'lineitem'"); got == "0" {
		t.Error("no lineitem indexes after the load")
	}
	if got := psql(t, url, "select sum(l_quantity) from lineitem"); got != "1536127.00" {
		t.Errorf("sum(l_quantity) = %s, want 1536127.00", got)
	}

	// Loading again without --drop refuses and changes nothing.
	code, _, errs = loadTpch(t, bin, "--sf", "0.01", "--database-url", url)
	if code == 0 || !strings.Contains(errs, "--drop") {
		t.Errorf("second load without --drop: exit %d, %q", code, errs)
	}

	// A stream that breaks half way fails the load and is not reported.
	fake := filepath.Join(t.TempDir(), "tpchgen-broken")
	script := "#!/bin/sh\ncase \" $* \" in *\" lineitem \"*) \"" + bin + "\" \"$@\" | head -n 100; exit 3 ;; esac\nexec \"" + bin + "\" \"$@\"\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errs = loadTpch(t, fake, "--sf", "0.01", "--jobs", "2", "--drop", "--database-url", url)
	if code == 0 {
		t.Fatalf("load with a broken lineitem stream exited 0\n%s", out)
	}
	if !strings.Contains(errs, "loading lineitem part") || strings.Contains(out, "lineitem") {
		t.Errorf("broken stream: stderr %q, stdout %q; want the failure named and no lineitem line", errs, out)
	}

	// Rows that PostgreSQL rejects fail the load too.
	garbage := filepath.Join(t.TempDir(), "tpchgen-garbage")
	script = "#!/bin/sh\ncase \" $* \" in *\" orders \"*) echo 'not a row'; exit 0 ;; esac\nexec \"" + bin + "\" \"$@\"\n"
	if err := os.WriteFile(garbage, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, errs = loadTpch(t, garbage, "--sf", "0.01", "--drop", "--database-url", url)
	if code == 0 || !strings.Contains(errs, "loading orders part") {
		t.Errorf("rejected rows: exit %d, stderr %q", code, errs)
	}
}

func TestLoadTpchBadArguments(t *testing.T) {
	bin := buildTpchgen(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sf", "0", "--database-url", "postgres://x"}, "--sf 0"},
		{[]string{"--sf", "1"}, "--database-url is required"},
		{[]string{"--jobs", "zero", "--database-url", "postgres://x"}, "--jobs must be a positive integer"},
		{[]string{"--frobnicate"}, "unknown argument"},
	} {
		cmd := exec.Command("../../scripts/load-tpch", c.args...)
		cmd.Env = append(os.Environ(), "TPCHGEN="+bin, "DATABASE_URL=")
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("load-tpch %v: %v %q; want exit 2 and %q", c.args, err, out, c.want)
		}
	}
}
