// Second review of the benchmark pipeline (pkg/perf). Each test asserts
// what docs/formats.md or the code's own comments promise and fails on the
// code as reviewed.

package perf

import (
	"bytes"
	"strings"
	"testing"
)

const rvp2Run = `{"type":"run","version":"1.0","run_id":"R1","paths":["native","server"],"queries":[{"id":"q","weight":"light","size":"1","sql":"SELECT 1"}],"iterations":1}`

const rvp2Sample = `{"type":"sample","version":"1.0","run_id":"R1","path":"native","query":"q","phase":"warm","concurrency":1,"iter":0,"client":0,"status":"ok","dur_ns":5}`

// TestPerf2ReviewSampleDurNSNull: docs/formats.md: "A line that ... lacks
// type/version (or a sample its dur_ns) ... is an error naming file:line".
// decode (records.go) tests m["dur_ns"] == nil, but a JSON null is a
// non-nil RawMessage ("null"), and unmarshalling null into an int64 leaves
// 0: a sample with "dur_ns":null is accepted as an ok call of 0 ns and pulls
// min/p50 down. (headerString treats null as missing for type and version,
// so the reader is inconsistent with itself.)
func TestPerf2ReviewSampleDurNSNull(t *testing.T) {
	line := strings.Replace(rvp2Sample, `"dur_ns":5`, `"dur_ns":null`, 1)
	recs, err := ReadAll(strings.NewReader(rvp2Run+"\n"+line+"\n"), "s.jsonl")
	if err == nil {
		t.Fatalf("sample with dur_ns null accepted as an ok call of dur_ns=%d ns; want an error naming s.jsonl:2 and dur_ns",
			recs.Samples[0].DurNS)
	}
	if !strings.HasPrefix(err.Error(), "s.jsonl:2: ") || !strings.Contains(err.Error(), "dur_ns") {
		t.Errorf("error %q, want s.jsonl:2 and dur_ns named", err)
	}
}

// TestPerf2ReviewFieldNamesExactUnicodeFold: docs/formats.md: "Field names are
// matched exactly (DUR_NS is an unknown field, not dur_ns)". exactObject
// (exactjson.go) drops only keys whose strings.ToLower equals a field's
// name, but encoding/json matches keys by Unicode simple case folding, in
// which U+017F (ſ, LATIN SMALL LETTER LONG S) folds to s and U+212A (K,
// KELVIN SIGN) to k. strings.ToLower leaves both as they are, so the
// unknown field "dur_nſ" survives the filter and encoding/json writes it
// into dur_ns, and "ſtatus" into status.
func TestPerf2ReviewFieldNamesExactUnicodeFold(t *testing.T) {
	line := strings.Replace(rvp2Sample, `"dur_ns":5`, `"dur_ns":5,"dur_nſ":9000000,"ſtatus":"error"`, 1)
	recs, err := ReadAll(strings.NewReader(rvp2Run+"\n"+line+"\n"), "s.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	s := recs.Samples[0]
	if s.DurNS != 5 {
		t.Errorf(`dur_ns read as %d from a line with "dur_ns":5 and an unknown field "dur_nſ":9000000`, s.DurNS)
	}
	if s.Status != StatusOK {
		t.Errorf(`status read as %q from a line with "status":"ok" and an unknown field "ſtatus":"error"`, s.Status)
	}
}

// TestPerf2ReviewHTMLIDsDistinct: htmlElementID (html.go) escapes every byte
// but letters, digits and '-' "so distinct names keep distinct ids", but
// the prefixes themselves end in '-' words ("latency-", "latency-chart-",
// "latency-vs-concurrency-") and '-' is kept in the name: the query "x"'s
// chart is id="latency-chart-x", which is also the section id of a query
// named "chart-x"; and a query named "vs-concurrency" gets
// id="latency-vs-concurrency", the id of the page's fixed "p50 latency"
// block. Duplicate ids make the page invalid and #fragment links and
// getElementById land on the wrong element. Expected: every id unique.
func TestPerf2ReviewHTMLIDsDistinct(t *testing.T) {
	st := func(q string) Stat {
		return Stat{Path: "native", Query: q, Phase: PhaseWarm, Concurrency: 1, N: 30, P50NS: 1000, P95NS: 2000, P99NS: 3000, P50CINS: [2]int64{900, 1100}}
	}
	recs := &Records{
		Run:   &Run{Header: Header{RunID: "r"}, Paths: []string{"native"}, Queries: []Query{{ID: "x"}, {ID: "chart-x"}, {ID: "vs-concurrency"}}},
		Stats: []Stat{st("x"), st("chart-x"), st("vs-concurrency")},
	}
	var buf bytes.Buffer
	if err := RenderHTML(&buf, recs); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, id := range htmlIDs(buf.String()) {
		if seen[id] {
			t.Errorf("id %q appears more than once", id)
		}
		seen[id] = true
	}
}
