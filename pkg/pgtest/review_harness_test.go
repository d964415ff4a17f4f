package pgtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Settings value is written into postgresql.conf inside '...'; the
// server's configuration scanner treats a backslash there as an escape
// (\b, \n, \t, octal, and \' which ends nothing), so values must have
// their backslashes doubled as well as their quotes. Settings promises
// "any GUC" with the value given.
func TestHarnessReviewSettingWithBackslash(t *testing.T) {
	want := `C:\new\table\b`
	c := Start(t, Options{Settings: map[string]string{"qpkit.zz_path": want}})
	if got := show(t, c.URL(), "qpkit.zz_path"); got != want {
		t.Errorf("current_setting(qpkit.zz_path) = %q, want %q", got, want)
	}
}

// A value that ends in a backslash makes the quoted string swallow its
// closing quote: the server does not start at all.
func TestHarnessReviewSettingEndingInBackslash(t *testing.T) {
	want := `D:\archive\`
	c, err := StartCluster(Options{Settings: map[string]string{"qpkit.zz_dir": want}})
	if err != nil {
		t.Fatalf("StartCluster with a setting ending in a backslash: %v", err)
	}
	defer c.Stop()
	if got := show(t, c.URL(), "qpkit.zz_dir"); got != want {
		t.Errorf("current_setting(qpkit.zz_dir) = %q, want %q", got, want)
	}
}

// FindBinDir accepts a relative PGTEST_BINDIR (checked against the current
// directory), but the programs are then started with the cluster directory
// (or "/") as their working directory, where the relative path means
// nothing: the cluster cannot start.
func TestHarnessReviewRelativeBinDir(t *testing.T) {
	abs, err := FindBinDir()
	if err != nil {
		t.Skip(err)
	}
	// A directory the server account may traverse, holding a link to the
	// real programs, as the current directory; PGTEST_BINDIR=pgbin.
	dir, err := os.MkdirTemp("/tmp", "zzharness-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(dir, "pgbin")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	rel := "pgbin"
	t.Setenv("PGTEST_BINDIR", rel)
	got, err := FindBinDir()
	if err != nil {
		t.Fatalf("FindBinDir rejected the relative PGTEST_BINDIR=%s: %v (then it should say so)", rel, err)
	}
	c, err := StartCluster(Options{})
	if err != nil {
		t.Fatalf("FindBinDir accepted PGTEST_BINDIR=%s (returned %q) but StartCluster fails: %v", rel, got, err)
	}
	defer c.Stop()
	show(t, c.URL(), "port")
}

// A value with a line break used to end the quoted string mid-line: the
// server refused its configuration and did not start. It is written with
// PostgreSQL's \n and \r escapes and arrives as given.
func TestHarnessReviewSettingWithLineBreak(t *testing.T) {
	want := "first line\nsecond\r\nthird"
	c := Start(t, Options{Settings: map[string]string{"qpkit.zz_lines": want}})
	if got := show(t, c.URL(), "qpkit.zz_lines"); got != want {
		t.Errorf("current_setting(qpkit.zz_lines) = %q, want %q", got, want)
	}
}

// A name postgresql.conf cannot hold is refused before initdb, naming it.
func TestHarnessReviewSettingBadName(t *testing.T) {
	for _, name := range []string{"", "work mem", "x=1", "1abc", "a\nb"} {
		c, err := StartCluster(Options{Settings: map[string]string{name: "1"}})
		if err == nil {
			c.Stop()
			t.Errorf("StartCluster with setting name %q: no error", name)
			continue
		}
		if !strings.Contains(err.Error(), "setting name") {
			t.Errorf("StartCluster with setting name %q: %v, want an error naming the setting", name, err)
		}
	}
}
