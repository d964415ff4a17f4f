package hba

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rvLoad writes files (name -> text) under a fresh directory and loads its
// pg_hba.conf.
func rvLoad(t *testing.T, files map[string]string) (*Rules, string, error) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := Load(filepath.Join(dir, "pg_hba.conf"))
	return rs, dir, err
}

// TestHBAReviewIncludeAbsolutePath: PostgreSQL 15 takes an @file with an
// absolute path as it is (tokenize_inc_file: "absolute path is taken
// as-is"); checked on PG 15.18: "host all @/tmp/x/staff 10.0.0.0/8 md5"
// gives user_name {dave,erin} in pg_hba_file_rules.
func TestHBAReviewIncludeAbsolutePath(t *testing.T) {
	staffDir := t.TempDir()
	staff := filepath.Join(staffDir, "staff")
	if err := os.WriteFile(staff, []byte("dave, erin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rs, _, err := rvLoad(t, map[string]string{
		"pg_hba.conf": "host all @" + staff + " 10.0.0.0/8 md5\n",
	})
	if err != nil {
		t.Fatalf("absolute @file refused: %v", err)
	}
	if r, ok := rs.Match(Client{"app", "erin", netip.MustParseAddr("10.1.1.1"), false}); !ok || r.Method != MD5 {
		t.Fatalf("erin (listed in the absolute @file) not matched: %v %v", r, ok)
	}
}

// TestHBAReviewIncludeNestedRelative: an @file inside an included file is
// relative to the including file's directory (PG 15: tokenize_inc_file
// passes the included file's name down); checked on PG 15.18:
// "@sub/staff" whose sub/staff says "@more" reads sub/more.
func TestHBAReviewIncludeNestedRelative(t *testing.T) {
	rs, _, err := rvLoad(t, map[string]string{
		"pg_hba.conf": "host all @sub/staff 10.0.0.0/8 md5\n",
		"sub/staff":   "@more\n",
		"sub/more":    "frank\n",
	})
	if err != nil {
		t.Fatalf("nested relative @file refused: %v", err)
	}
	if r, ok := rs.Match(Client{"app", "frank", netip.MustParseAddr("10.1.1.1"), false}); !ok || r.Method != MD5 {
		t.Fatalf("frank not matched: %v %v", r, ok)
	}
}

// TestHBAReviewContinuationJoinsWithoutSpace: PG 15 (tokenize_auth_file)
// strips the trailing backslash and appends the next line directly, no
// space between; checked on PG 15.18: "host all al\" + "ice 10.0.0.0/8
// md5" is user {alice}, and "host all alice\" + ",bob ..." is {alice,bob}.
func TestHBAReviewContinuationJoinsWithoutSpace(t *testing.T) {
	rs, _, err := rvLoad(t, map[string]string{
		"pg_hba.conf": "host all al\\\nice 10.0.0.0/8 md5\n" +
			"host all carol\\\n,dave 11.0.0.0/8 md5\n",
	})
	if err != nil {
		t.Fatalf("continued lines refused: %v", err)
	}
	if r, ok := rs.Match(Client{"app", "alice", netip.MustParseAddr("10.1.1.1"), false}); !ok || r.Line != 1 {
		t.Fatalf("alice: %v %v, want line 1", r, ok)
	}
	if r, ok := rs.Match(Client{"app", "dave", netip.MustParseAddr("11.1.1.1"), false}); !ok || r.Line != 3 {
		t.Fatalf("dave: %v %v, want line 3", r, ok)
	}
}

// An @file that includes itself is refused with an error naming the
// nesting, not followed until the stack runs out.
func TestHBAReviewIncludeCycleRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "loop"), []byte("alice @loop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pg_hba.conf")
	if err := os.WriteFile(path, []byte("host all @loop 10.0.0.0/8 md5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), "nested deeper than 10") {
		t.Fatalf("self-including @file: %v", err)
	}
}
