package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// call runs the CLI in-process.
func call(t *testing.T, stdout io.Writer, args ...string) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	code := run(context.Background(), args, stdout, &stderr)
	return code, stderr.String()
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"--sf", "0", "--table", "nation"}, "tpchgen: --sf 0 must be greater than 0\n"},
		{[]string{"--sf=-1", "--table", "nation"}, "tpchgen: --sf -1 must be greater than 0\n"},
		{[]string{"--sf", "NaN", "--table", "nation"}, "tpchgen: --sf NaN is not a number\n"},
		{[]string{"--sf", "Inf", "--table", "nation"}, "tpchgen: --sf +Inf is not a number\n"},
		{[]string{"--table", "foo"}, "tpchgen: --table: unknown table \"foo\" (want one of nation, region, part, supplier, partsupp, customer, orders, lineitem)\n"},
		{[]string{"--table", "nation", "--parts", "4", "--part", "5"}, "tpchgen: --part 5 is out of range 1..4\n"},
		{[]string{"--table", "nation", "--parts", "4", "--part", "0"}, "tpchgen: --part 0 is out of range 1..4\n"},
		{[]string{"--table", "nation", "--part", "2"}, "tpchgen: --part requires --parts\n"},
		{[]string{"--table", "nation", "--parts", "2"}, "tpchgen: --parts requires --part (1..2)\n"},
		{[]string{"--table", "nation", "--parts", "0", "--part", "1"}, "tpchgen: --parts 0 must be at least 1\n"},
		{[]string{"--table", "nation", "--format", "xml"}, "tpchgen: --format: unknown format \"xml\" (want tbl, copy or csv)\n"},
		{[]string{"--table", "nation", "--jobs=-2"}, "tpchgen: --jobs -2 must not be negative\n"},
		{[]string{"--sf", "0.01"}, "tpchgen: --table is required when writing to stdout (or give --out DIR for all tables)\n"},
		{[]string{"--table", "all"}, "tpchgen: --table is required when writing to stdout (or give --out DIR for all tables)\n"},
		{[]string{"queries", "--query", "23"}, "tpchgen: --query 23 is out of range 1..22\n"},
	}
	for _, c := range cases {
		var out bytes.Buffer
		code, msg := call(t, &out, c.args...)
		if code != 2 || msg != c.msg || out.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q, %d bytes out; want exit 2, %q", c.args, code, msg, out.Len(), c.msg)
		}
	}
	// Parse errors come from kong; they must still be one line and exit 2.
	for _, args := range [][]string{{"--sf", "abc"}, {"--bogus"}, {"stray"}} {
		code, msg := call(t, io.Discard, args...)
		if code != 2 || !strings.HasPrefix(msg, "tpchgen: ") || strings.Count(msg, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q", args, code, msg)
		}
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Reference checksums from dbgen 2.14.0 (see pkg/tpch/testdata).
var sf001 = map[string]string{
	"nation":   "66f96949939fa8fdf1c4ffed1e5f6c2842fe11a14b51fdc6ed1e17460031e8c5",
	"region":   "6022658d673924389b54dcb70fa8c3d6da1b0d7afa3c1c017bab62a019df404f",
	"part":     "7a26cd61498eb1cc84d73ca859bcb2acfe1b6cc22e5eae47ba49640ca2a4e59e",
	"supplier": "0e8d5acfdd475c136523d94b297e0cf6ee223dad6fce352de001ca283d63541c",
	"partsupp": "6d02a612f975020e5982d4d2e6e5d66c879a332c9fb02521ebf1e1b2f90ba4af",
	"customer": "35687dad57aeb383f029354868719ecf0f4a4f60d56e0cfaef2edebbd28cbeb3",
	"orders":   "6791f5e540e2399a4086adc8effc2f28878c4420878fe1132925e89446a0bf9d",
	"lineitem": "68af4af7afce86bda6e222998bfae75dd66fd8019ee1df8ae4978d1d0c2e2a03",
}

func TestStdout(t *testing.T) {
	for name, want := range sf001 {
		var out bytes.Buffer
		code, msg := call(t, &out, "--sf", "0.001", "--table", name, "--quiet")
		if code != 0 || msg != "" {
			t.Fatalf("%s: exit %d: %s", name, code, msg)
		}
		if got := sha(out.Bytes()); got != want {
			t.Errorf("%s: sha256 %s, want %s", name, got, want)
		}
	}
}

func TestPartsAndJobs(t *testing.T) {
	for _, table := range []string{"lineitem", "partsupp", "nation"} {
		var whole bytes.Buffer
		if code, msg := call(t, &whole, "gen", "--sf", "0.01", "--table", table, "--jobs", "1"); code != 0 {
			t.Fatal(msg)
		}
		var j2 bytes.Buffer
		if code, msg := call(t, &j2, "--sf", "0.01", "--table", table, "--jobs", "2"); code != 0 {
			t.Fatal(msg)
		}
		if !bytes.Equal(whole.Bytes(), j2.Bytes()) {
			t.Errorf("%s: --jobs 2 differs from --jobs 1", table)
		}
		for _, n := range []string{"3", "7"} {
			var cat bytes.Buffer
			for k := 1; k <= map[string]int{"3": 3, "7": 7}[n]; k++ {
				if code, msg := call(t, &cat, "--sf", "0.01", "--table", table, "--parts", n, "--part", string(rune('0'+k))); code != 0 {
					t.Fatal(msg)
				}
			}
			if !bytes.Equal(whole.Bytes(), cat.Bytes()) {
				t.Errorf("%s: %s parts do not concatenate to the whole", table, n)
			}
		}
	}
}

// epipeWriter fails like a pipe whose reader has gone away.
type epipeWriter struct{ writes int }

func (w *epipeWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.writes > 1 {
		return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}
	}
	return len(p), nil
}

func TestClosedPipe(t *testing.T) {
	for _, jobs := range []string{"1", "2"} {
		code, msg := call(t, &epipeWriter{}, "--sf", "0.01", "--table", "lineitem", "--jobs", jobs)
		if code != 0 || msg != "" {
			t.Errorf("jobs %s: exit %d, stderr %q; want a quiet exit 0", jobs, code, msg)
		}
	}
	// A real pipe whose read end is closed.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	code, msg := call(t, w, "--sf", "0.01", "--table", "orders")
	if code != 0 || msg != "" {
		t.Errorf("closed pipe: exit %d, stderr %q", code, msg)
	}
}

func TestOutDir(t *testing.T) {
	dir := t.TempDir()
	code, msg := call(t, io.Discard, "--sf", "0.001", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 8 {
		t.Errorf("%d files in --out, want 8", len(entries))
	}
	for name, want := range sf001 {
		b, err := os.ReadFile(filepath.Join(dir, name+".tbl"))
		if err != nil {
			t.Fatal(err)
		}
		if got := sha(b); got != want {
			t.Errorf("%s.tbl: sha256 %s, want %s", name, got, want)
		}
	}
	// A chunk in another format gets the chunk number as a suffix.
	code, msg = call(t, io.Discard, "--sf", "0.001", "--table", "orders", "--format", "csv", "--parts", "2", "--part", "2", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "orders.csv.2")); err != nil {
		t.Error(err)
	}
	// /dev/null discards.
	if code, msg := call(t, io.Discard, "--sf", "0.001", "--out", os.DevNull); code != 0 {
		t.Errorf("--out /dev/null: exit %d: %s", code, msg)
	}
}

// TestOutDirFailure checks that a failed run leaves no partial files.
func TestOutDirFailure(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stderr bytes.Buffer
	code := run(ctx, []string{"--sf", "0.01", "--out", dir}, io.Discard, &stderr)
	if code != 1 || stderr.String() != "tpchgen: interrupted\n" {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%d files left behind", len(entries))
	}
	// An --out path that is a file cannot be used.
	f := filepath.Join(dir, "file")
	os.WriteFile(f, nil, 0o644)
	if code, msg := call(t, io.Discard, "--sf", "0.001", "--out", f); code != 1 || strings.Count(msg, "\n") != 1 {
		t.Errorf("--out on a file: exit %d, stderr %q", code, msg)
	}
}

func TestQueriesCommand(t *testing.T) {
	var out bytes.Buffer
	if code, msg := call(t, &out, "queries"); code != 0 {
		t.Fatal(msg)
	}
	parts := regexp.MustCompile(`(?m)^-- Q([0-9]+)$`).Split(out.String(), -1)
	if len(parts) != 23 || strings.TrimSpace(parts[0]) != "" {
		t.Fatalf("split into %d pieces", len(parts))
	}
	for i, p := range parts[1:] {
		p = strings.TrimSpace(p)
		if !strings.HasSuffix(p, ";") || strings.Count(p, ";") != 1 {
			t.Errorf("Q%d is not one statement", i+1)
		}
	}
	out.Reset()
	if code, msg := call(t, &out, "queries", "--query", "15"); code != 0 {
		t.Fatal(msg)
	}
	if !strings.HasPrefix(out.String(), "with revenue0 (supplier_no, total_revenue) as (") {
		t.Errorf("Q15: %.80q", out.String())
	}
}

func TestDDLCommand(t *testing.T) {
	var out bytes.Buffer
	if code, _ := call(t, &out, "ddl"); code != 0 || strings.Count(out.String(), "CREATE TABLE") != 8 {
		t.Errorf("ddl: exit %d, %d CREATE TABLE", code, strings.Count(out.String(), "CREATE TABLE"))
	}
	out.Reset()
	if code, _ := call(t, &out, "ddl", "--constraints"); code != 0 || !strings.Contains(out.String(), "lineitem (l_partkey, l_suppkey)") || strings.Contains(out.String(), "CREATE TABLE") {
		t.Errorf("ddl --constraints: exit %d, %q", code, out.String())
	}
}

func TestHelp(t *testing.T) {
	var out bytes.Buffer
	code, _ := call(t, &out, "--help")
	if code != 0 || !strings.Contains(out.String(), "Usage: tpchgen") {
		t.Errorf("--help: exit %d", code)
	}
}

func TestCountCommand(t *testing.T) {
	var out bytes.Buffer
	if code, msg := call(t, &out, "count", "--sf", "0.01"); code != 0 {
		t.Fatal(msg)
	}
	want := "nation\t25\nregion\t5\npart\t2000\nsupplier\t100\npartsupp\t8000\ncustomer\t1500\norders\t15000\nlineitem\t60175\n"
	if out.String() != want {
		t.Errorf("count: got %q, want %q", out.String(), want)
	}
	if code, msg := call(t, io.Discard, "count", "--sf", "0"); code != 2 || msg != "tpchgen: --sf 0 must be greater than 0\n" {
		t.Errorf("count --sf 0: exit %d, %q", code, msg)
	}
}
