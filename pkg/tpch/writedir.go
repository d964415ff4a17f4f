// Writing tables into a directory, all or nothing.

package tpch

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// FileName returns the name dbgen gives table t's file in opt's format:
// <table>.<ext>, or <table>.<ext>.<K> for chunk K.
func FileName(t Table, opt Options) string {
	name := t.String() + "." + opt.Format.Ext()
	if opt.Parts > 0 {
		name += "." + strconv.Itoa(opt.Part)
	}
	return name
}

// WriteDir writes each of tables into directory dir, creating it if
// needed, as the file FileName names. Each file is written under a
// temporary name and all are renamed into place only when every table
// succeeded, so a failed or cancelled run leaves no new or partial file
// behind. A dir of os.DevNull discards the data (for timing).
func (g *Generator) WriteDir(ctx context.Context, dir string, tables []Table, opt Options) error {
	if dir == os.DevNull {
		_, err := g.WriteTables(ctx, tables, func(Table) (io.Writer, error) { return io.Discard, nil }, opt)
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	type pending struct {
		f     *os.File
		final string
	}
	var files []pending
	open := func(t Table) (io.Writer, error) {
		name := FileName(t, opt)
		f, err := os.CreateTemp(dir, "."+name+".tmp-*")
		if err != nil {
			return nil, err
		}
		files = append(files, pending{f, filepath.Join(dir, name)})
		if err := f.Chmod(0o644); err != nil {
			return nil, err
		}
		return f, nil
	}
	_, err := g.WriteTables(ctx, tables, open, opt)
	for _, p := range files {
		if cerr := p.f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", p.final, cerr)
		}
	}
	if err == nil {
		for i, p := range files {
			if rerr := os.Rename(p.f.Name(), p.final); rerr != nil {
				err = rerr
				files = files[i:]
				break
			}
		}
		if err == nil {
			return nil
		}
	}
	for _, p := range files {
		os.Remove(p.f.Name())
	}
	return err
}
