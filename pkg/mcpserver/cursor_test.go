package mcpserver

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestRunSelectCursor pages 250 rows by 100: three pages, every row once,
// in either format and when the format changes between pages.
func TestRunSelectCursor(t *testing.T) {
	c := newClient(t, Config{})
	const q = "SELECT id FROM shop.customers WHERE id <= $1 ORDER BY id"
	params := []any{250}
	for _, formats := range [][]string{{"tsv"}, {"json"}, {"json", "tsv"}} {
		seen := map[string]int{}
		cursor := ""
		pages := 0
		for {
			f := formats[pages%len(formats)]
			args := map[string]any{"sql": q, "params": params, "max_rows": 100, "format": f}
			if cursor != "" {
				args["cursor"] = cursor
			}
			text, isErr := call(t, c, "run_select", args)
			if isErr {
				t.Fatalf("%v page %d: %s", formats, pages+1, text)
			}
			pages++
			var d doc
			if f == "json" {
				d = decode(t, text)
			} else {
				d = parseTSV(t, text)
			}
			for _, r := range d.Rows {
				seen[fmt.Sprint(r[0])]++
			}
			if d.Truncated != (d.Cursor != "") {
				t.Fatalf("%v page %d: truncated %v but cursor %q", formats, pages, d.Truncated, d.Cursor)
			}
			if d.Cursor == "" {
				break
			}
			if pages > 5 {
				t.Fatal("too many pages")
			}
			cursor = d.Cursor
		}
		if pages != 3 || len(seen) != 250 {
			t.Fatalf("%v: %d pages, %d distinct rows; want 3, 250", formats, pages, len(seen))
		}
		for id := 1; id <= 250; id++ {
			if seen[strconv.Itoa(id)] != 1 {
				t.Fatalf("%v: row %d seen %d times", formats, id, seen[strconv.Itoa(id)])
			}
		}
	}

	// The cursor of the second page, misused.
	text, _ := call(t, c, "run_select", map[string]any{"sql": q, "params": params, "max_rows": 100})
	d := parseTSV(t, text)
	if d.Cursor == "" {
		t.Fatalf("no cursor: %s", text)
	}
	for name, args := range map[string]map[string]any{
		"other sql":    {"sql": q + " DESC", "params": params, "cursor": d.Cursor},
		"other params": {"sql": q, "params": []any{249}, "cursor": d.Cursor},
	} {
		if text, isErr := call(t, c, "run_select", args); !isErr || !strings.Contains(text, "cursor belongs to a different sql or params") {
			t.Errorf("%s: %q (isError %v)", name, text, isErr)
		}
	}
	body, mac, _ := strings.Cut(d.Cursor, ".")
	forged := map[string]string{
		"garbage":      "not-a-cursor",
		"edited mac":   body + "." + strings.Repeat("A", len(mac)),
		"no signature": body,
	}
	for name, cur := range forged {
		if text, isErr := call(t, c, "run_select", map[string]any{"sql": q, "params": params, "cursor": cur}); !isErr || !strings.HasPrefix(text, "invalid cursor") {
			t.Errorf("%s: %q (isError %v)", name, text, isErr)
		}
	}
	// Another server process (another key) does not accept it.
	other := newClient(t, Config{})
	if text, isErr := call(t, other, "run_select", map[string]any{"sql": q, "params": params, "cursor": d.Cursor}); !isErr || !strings.HasPrefix(text, "invalid cursor") {
		t.Errorf("other server: %q (isError %v)", text, isErr)
	}
}
