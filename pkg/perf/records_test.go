package perf

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func i64(v int64) *int64 { return &v }

func TestWriterReaderRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, "")
	sf := 1.0
	recs := []Record{
		&Run{Header: Header{RunID: "20261129T235904Z-0123abcd"}, StartedAt: time.Date(2026, 11, 29, 23, 59, 4, 0, time.UTC),
			ScaleFactor: &sf, Paths: []string{"native", "server"}, Concurrency: []int{1, 4},
			Queries: []Query{{ID: "select1", Weight: "ultralight", Size: "1", SQL: "SELECT 1"}}},
		&Sample{Path: "native", Query: "select1", Phase: PhaseWarm, Concurrency: 1, Status: StatusOK, DurNS: 1000},
		&Sample{Path: "server", Query: "select1", Phase: PhaseWarm, Concurrency: 1, Status: StatusOK, DurNS: 2000, TDBNS: i64(900)},
		&Load{Path: "native", Query: "select1", Concurrency: 4, DurationNS: 1e9, Requests: 100},
		&End{Samples: 2},
		&Stat{Path: "native", Query: "select1", Phase: PhaseWarm, Concurrency: 1, N: 1},
		&Overhead{Path: "server", Query: "select1", Phase: PhaseWarm, Concurrency: 1},
		&TDB{Query: "select1"},
		&Compare{Path: "native", Query: "select1", Phase: PhaseWarm, Concurrency: 1, OldRunID: "a", NewRunID: "b"},
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(recs) {
		t.Fatalf("%d lines for %d records", len(lines), len(recs))
	}
	if !strings.HasPrefix(lines[1], `{"type":"sample","version":"1.0","run_id":"20261129T235904Z-0123abcd",`) {
		t.Errorf("sample line %s", lines[1])
	}
	if strings.Contains(lines[1], "t_db_ns") || !strings.Contains(lines[2], `"t_db_ns":900`) {
		t.Errorf("segments: native %s server %s", lines[1], lines[2])
	}
	if !strings.Contains(lines[0], `"scale_factor":1,`) {
		t.Errorf("run line %s", lines[0])
	}
	if strings.Contains(lines[8], `"run_id"`) {
		t.Errorf("compare record has a run_id: %s", lines[8])
	}

	got, err := ReadAll(strings.NewReader(buf.String()), "x.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if got.Run == nil || got.Run.RunID != "20261129T235904Z-0123abcd" || string(got.RunRaw) != lines[0] {
		t.Errorf("run %+v raw %s", got.Run, got.RunRaw)
	}
	if len(got.Samples) != 2 || len(got.Loads) != 1 || len(got.Ends) != 1 || len(got.Stats) != 1 ||
		len(got.Overheads) != 1 || len(got.TDBs) != 1 || len(got.Compares) != 1 {
		t.Errorf("counts %+v", got)
	}
	if s := got.Samples[1]; s.TDBNS == nil || *s.TDBNS != 900 || got.Samples[0].TDBNS != nil {
		t.Errorf("t_db_ns %v %v", got.Samples[0].TDBNS, s.TDBNS)
	}
	if !got.Run.StartedAt.Equal(time.Date(2026, 11, 29, 23, 59, 4, 0, time.UTC)) {
		t.Errorf("started_at %v", got.Run.StartedAt)
	}
}

const runLine = `{"type":"run","version":"1.0","run_id":"r1","queries":[{"id":"q1"}]}`

func TestReaderAccepts(t *testing.T) {
	in := runLine + "\n\n  \r\n" +
		`{"type":"sample","version":"1.7","run_id":"r1","path":"native","query":"q1","phase":"cold","concurrency":1,"status":"ok","dur_ns":5,"future_field":{"x":[1]}}` + "\r\n" +
		`{"type":"end","version":"1.0","run_id":"r1"}`
	recs, err := ReadAll(strings.NewReader(in), "ok.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs.Samples) != 1 || recs.Samples[0].DurNS != 5 || len(recs.Ends) != 1 {
		t.Errorf("%+v", recs)
	}
	// A file without a run record (a compare file) is fine.
	if _, err := ReadAll(strings.NewReader(`{"type":"compare","version":"1.0","path":"p","query":"q"}`), "c"); err != nil {
		t.Error(err)
	}
}

func TestReaderErrors(t *testing.T) {
	sample := func(fields string) string {
		return `{"type":"sample","version":"1.0","run_id":"r1","path":"native","query":"q1","phase":"warm","concurrency":1,"status":"ok","dur_ns":5` + fields + "}"
	}
	for _, tc := range []struct {
		name, line, want string
	}{
		{"not json", "hello", "not a JSON object"},
		{"array", "[1,2]", "not a JSON object"},
		{"null", "null", "not a JSON object"},
		{"truncated", `{"type":"sample","version":"1.0"`, "unexpected end of JSON input"},
		{"trailing", runLine + " {}", "invalid character"},
		{"no type", `{"version":"1.0"}`, "type missing"},
		{"no version", `{"type":"sample"}`, "version missing"},
		{"numeric version", `{"type":"sample","version":1.0}`, "field version: number is not string"},
		{"bad version", `{"type":"sample","version":"one"}`, `version "one" is not major.minor`},
		{"major 2", `{"type":"sample","version":"2.0"}`, "unsupported version 2.0 (this reader knows 1.x)"},
		{"unknown type", `{"type":"audit","version":"1.0"}`, `unknown record type "audit"`},
		{"bad field type", sample(`,"rows":"many"`), "sample: field rows: string is not int64"},
		{"bad segment", sample(`,"t_db_ns":-1`), "sample: t_db_ns -1 < 0"},
		{"bad phase", strings.Replace(sample(""), "warm", "hot", 1), `sample: phase "hot" is not cold or warm`},
		{"bad status", strings.Replace(sample(""), `"ok"`, `"fine"`, 1), `status "fine" is not ok, timeout or error`},
		{"no path", strings.Replace(sample(""), `"native"`, `""`, 1), "path or query missing"},
		{"zero concurrency", strings.Replace(sample(""), `"concurrency":1`, `"concurrency":0`, 1), "concurrency 0 < 1"},
		{"negative dur", strings.Replace(sample(""), `"dur_ns":5`, `"dur_ns":-5`, 1), "dur_ns -5 < 0"},
		{"bad load", `{"type":"load","version":"1.0","path":"p","query":"q","concurrency":1,"requests":-1}`, "load: negative"},
		{"run without id", `{"type":"run","version":"1.0"}`, "run: run_id missing"},
		{"repeated query", `{"type":"run","version":"1.0","run_id":"r","queries":[{"id":"a"},{"id":"a"}]}`, `queries[1].id "a" repeated`},
		{"second run", runLine, "run record is not the first record"},
		{"other run", strings.Replace(sample(""), `"r1"`, `"r2"`, 1), `run_id "r2" is not the run record's "r1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := runLine + "\n" + sample("") + "\n" + tc.line + "\n" + sample("") + "\n"
			_, err := ReadAll(strings.NewReader(in), "samples.jsonl")
			var le *LineError
			if !errors.As(err, &le) || le.Line != 3 || le.Name != "samples.jsonl" {
				t.Fatalf("err %v, want a LineError at samples.jsonl:3", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "samples.jsonl:3: bad record: ") || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q, want it to contain %q", msg, tc.want)
			}
		})
	}
}

func TestReaderLineTooLong(t *testing.T) {
	in := runLine + "\n" + `{"type":"end","version":"1.0","x":"` + strings.Repeat("a", maxLine) + `"}` + "\n"
	_, err := ReadAll(strings.NewReader(in), "-")
	if err == nil || !strings.HasPrefix(err.Error(), "-:2: bad record: ") {
		t.Errorf("err %v", err)
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return len(p), nil
}

func TestWriterStickyError(t *testing.T) {
	w := NewWriter(&failWriter{n: 1}, "r")
	if err := w.Write(&End{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&End{}); err == nil || err.Error() != "disk full" {
		t.Fatalf("second write: %v", err)
	}
	if err := w.WriteRaw([]byte(runLine)); err == nil {
		t.Error("write after error succeeded")
	}
}

func TestWriterFlushesEachRecord(t *testing.T) {
	var out bytes.Buffer
	bw := bufio.NewWriterSize(&out, 4096)
	w := NewWriter(bw, "r")
	if err := w.Write(&Sample{Path: "native", Query: "q", Phase: PhaseWarm, Concurrency: 1, Status: StatusOK}); err != nil {
		t.Fatal(err)
	}
	if out.Len() == 0 || bw.Buffered() != 0 {
		t.Errorf("record still buffered: out %d buffered %d", out.Len(), bw.Buffered())
	}
	if err := w.WriteRaw([]byte("  " + runLine + "\n")); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "\n"+runLine+"\n") {
		t.Errorf("raw copy %q", out.String())
	}
}

func TestWriterRunID(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, "")
	if err := w.Write(&Run{Header: Header{RunID: "abc"}}); err != nil {
		t.Fatal(err)
	}
	s := &Sample{Header: Header{Type: "wrong", Version: "9.9"}}
	if err := w.Write(s); err != nil {
		t.Fatal(err)
	}
	if s.Type != TypeSample || s.Version != Version || s.RunID != "abc" || w.RunID() != "abc" {
		t.Errorf("header %+v", s.Header)
	}
}
