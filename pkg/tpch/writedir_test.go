package tpch

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestFileName(t *testing.T) {
	if got := FileName(Lineitem, Options{}); got != "lineitem.tbl" {
		t.Errorf("whole table: %q", got)
	}
	if got := FileName(Orders, Options{Format: FormatCopy, Parts: 4, Part: 3}); got != "orders.copy.3" {
		t.Errorf("chunk: %q", got)
	}
}

func TestWriteDir(t *testing.T) {
	g, err := NewGenerator(0.001)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "new")
	opt := Options{Format: FormatCSV, Parts: 2, Part: 1}
	if err := g.WriteDir(ctx, dir, []Table{Region, Orders, Lineitem}, opt); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("%d files in the directory, want 3", len(entries))
	}
	for _, tb := range []Table{Region, Orders, Lineitem} {
		path := filepath.Join(dir, FileName(tb, opt))
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := generate(t, 0.001, tb, opt); !bytes.Equal(got, want) {
			t.Errorf("%s differs from WriteTable's output", path)
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
			t.Errorf("%s has mode %v, want 0644", path, st.Mode().Perm())
		}
	}
	if err := g.WriteDir(ctx, os.DevNull, Tables, Options{}); err != nil {
		t.Errorf("discarding into %s: %v", os.DevNull, err)
	}
}

// A failed run leaves neither partial files nor replaced ones.
func TestWriteDirFailure(t *testing.T) {
	g, err := NewGenerator(0.001)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	old := filepath.Join(dir, "nation.tbl")
	os.WriteFile(old, []byte("old\n"), 0o644)
	// Cancel once customer has started, when earlier tables are complete.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opt := Options{Progress: func(t Table, _, _ int64) {
		if t == Customer {
			cancel()
		}
	}}
	if err := g.WriteDir(ctx, dir, Tables, opt); err == nil {
		t.Fatal("cancelled run succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if b, _ := os.ReadFile(old); len(entries) != 1 || string(b) != "old\n" {
		t.Errorf("after a failed run: %d entries, nation.tbl holds %q", len(entries), b)
	}
	if err := g.WriteDir(context.Background(), old, Tables, Options{}); err == nil {
		t.Error("WriteDir into a regular file succeeded")
	}
}
