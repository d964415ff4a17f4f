package tpch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// refSum is one line of a checksum file in testdata.
type refSum struct {
	sf    string
	table Table
	rows  int64
	bytes int64
	sha   string
}

func readSums(t *testing.T, name string) []refSum {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []refSum
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "sf\t") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			t.Fatalf("%s: bad line %q", name, line)
		}
		tb, err := ParseTable(f[1])
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := strconv.ParseInt(f[2], 10, 64)
		n, _ := strconv.ParseInt(f[3], 10, 64)
		out = append(out, refSum{f[0], tb, rows, n, f[4]})
	}
	return out
}

// hashWriter hashes and counts what is written.
type hashWriter struct {
	h     hash.Hash
	n     int64
	lines int64
	keep  *bytes.Buffer
}

func (w *hashWriter) Write(p []byte) (int, error) {
	w.h.Write(p)
	w.n += int64(len(p))
	w.lines += int64(bytes.Count(p, []byte{'\n'}))
	if w.keep != nil {
		w.keep.Write(p)
	}
	return len(p), nil
}

func checkSums(t *testing.T, file string, format Format, sfs map[string]bool, jobs int) {
	seen := map[string]bool{}
	defer func() {
		for sf := range sfs {
			if !seen[sf] {
				t.Errorf("%s has no rows for SF %s", file, sf)
			}
		}
	}()
	for _, r := range readSums(t, file) {
		if !sfs[r.sf] {
			continue
		}
		seen[r.sf] = true
		t.Run(fmt.Sprintf("%s/sf%s/%s", format, r.sf, r.table), func(t *testing.T) {
			sf, _ := strconv.ParseFloat(r.sf, 64)
			g, err := NewGenerator(sf)
			if err != nil {
				t.Fatal(err)
			}
			w := &hashWriter{h: sha256.New()}
			if dump := os.Getenv("TPCH_DUMP"); dump != "" {
				w.keep = &bytes.Buffer{}
				defer func() {
					os.WriteFile(filepath.Join(dump, r.table.String()+"."+format.Ext()), w.keep.Bytes(), 0o644)
				}()
			}
			st, err := g.WriteTable(context.Background(), w, r.table, Options{Format: format, Jobs: jobs})
			if err != nil {
				t.Fatal(err)
			}
			if st.Rows != r.rows || w.lines != r.rows {
				t.Errorf("rows: got %d (%d lines), want %d", st.Rows, w.lines, r.rows)
			}
			if st.Bytes != r.bytes || w.n != r.bytes {
				t.Errorf("bytes: got %d (%d written), want %d", st.Bytes, w.n, r.bytes)
			}
			if got := hex.EncodeToString(w.h.Sum(nil)); got != r.sha {
				t.Errorf("sha256: got %s, want %s", got, r.sha)
			}
		})
	}
}

func TestChecksumsTbl(t *testing.T) {
	checkSums(t, "dbgen-checksums.tsv", FormatTbl, map[string]bool{"0.001": true, "0.01": true}, 1)
}

// TestChunkChecksums compares chunks with dbgen's own -C/-S output, and
// (at SF 30000, where dbgen switches to a 64-bit generator for two
// columns) the first of a million chunks with the start of dbgen's file.
func TestChunkChecksums(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "chunk-checksums.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		fl := strings.Split(sc.Text(), "\t")
		if len(fl) != 7 || fl[0] == "sf" {
			continue
		}
		n++
		sf, _ := strconv.ParseFloat(fl[0], 64)
		tb, err := ParseTable(fl[1])
		if err != nil {
			t.Fatal(err)
		}
		parts, _ := strconv.Atoi(fl[2])
		part, _ := strconv.Atoi(fl[3])
		rows, _ := strconv.ParseInt(fl[4], 10, 64)
		size, _ := strconv.ParseInt(fl[5], 10, 64)
		t.Run(fmt.Sprintf("sf%s/%s/%d-of-%d", fl[0], tb, part, parts), func(t *testing.T) {
			g, err := NewGenerator(sf)
			if err != nil {
				t.Fatal(err)
			}
			w := &hashWriter{h: sha256.New()}
			if _, err := g.WriteTable(context.Background(), w, tb, Options{Parts: parts, Part: part}); err != nil {
				t.Fatal(err)
			}
			if w.lines != rows || w.n != size {
				t.Errorf("got %d rows %d bytes, want %d rows %d bytes", w.lines, w.n, rows, size)
			}
			if got := hex.EncodeToString(w.h.Sum(nil)); got != fl[6] {
				t.Errorf("sha256 %s, want %s", got, fl[6])
			}
		})
	}
	if n == 0 {
		t.Fatal("no chunk checksums")
	}
}
