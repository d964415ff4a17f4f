package snapshot

import (
	"context"
	"strings"
	"testing"
)

// The fast setting must keep strings out of FSST segments (that is where
// the writer's time goes), still give a column of few distinct strings a
// dictionary (filters on it are faster), and copy exactly.
func TestCompressionFast(t *testing.T) {
	ctx := context.Background()
	url := newSource(t, `CREATE TABLE s (id int, flag text, note text);
INSERT INTO s SELECT i, (ARRAY['A','N','R'])[i % 3 + 1], 'note number ' || (i % 5000) FROM generate_series(1, 300000) i;`)
	methods := func(c Compression) string {
		tgt := target(t)
		if _, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: []string{"s"}, Compression: c, Verify: true}); err != nil {
			t.Fatal(err)
		}
		db := openCopy(t, tgt)
		rows, err := db.QueryContext(ctx, "SELECT DISTINCT column_name || ':' || compression FROM pragma_storage_info('public.s') WHERE segment_type = 'VARCHAR' ORDER BY 1")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var m string
			if err := rows.Scan(&m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
		return strings.Join(out, ",")
	}
	full, fast := methods(CompressFull), methods(CompressFast)
	if !strings.Contains(full, "Dictionary") && !strings.Contains(full, "FSST") {
		t.Errorf("full compression used %q for strings, want dictionary or FSST (else this test proves nothing)", full)
	}
	if strings.Contains(fast, "FSST") || !strings.Contains(fast, "flag:Dictionary") {
		t.Errorf("fast compression used %q for strings, want a dictionary for flag and no FSST", fast)
	}
	if _, err := Run(ctx, Options{SourceURL: url, Target: target(t), Tables: []string{"s"}, Compression: "tiny"}); err == nil || !strings.Contains(err.Error(), `unknown compression "tiny"`) {
		t.Errorf("bad compression: %v", err)
	}
}
