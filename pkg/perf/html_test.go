package perf

import (
	"bytes"
	htmlpkg "html"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func htmlReadFixture(t *testing.T) *Records {
	t.Helper()
	f, err := os.Open("testdata/summary-fixture.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := ReadAll(f, "testdata/summary-fixture.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func htmlRender(t *testing.T, recs *Records) string {
	t.Helper()
	var buf bytes.Buffer
	if err := RenderHTML(&buf, recs); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

var htmlIDAttr = regexp.MustCompile(`\bid="([^"]*)"`)

func htmlIDs(html string) []string {
	var out []string
	for _, m := range htmlIDAttr.FindAllStringSubmatch(html, -1) {
		out = append(out, m[1])
	}
	return out
}

// htmlFixtureIDs are the element ids the fixture's report must have;
// tools/perfhtml's browser test checks them again in the DOM Chromium built.
var htmlFixtureIDs = []string{
	"provenance", "pg-settings", "queries",
	"latency", "latency-select1", "latency-q06", "latency-chart-select1", "latency-chart-q06",
	"sweep", "throughput", "throughput-select1", "throughput-q06",
	"latency-vs-concurrency", "latency-vs-concurrency-select1", "latency-vs-concurrency-q06",
	"decomp", "decomp-chart", "decomp-table",
	"overhead", "tdb", "js-errors",
}

func TestRenderHTMLFixture(t *testing.T) {
	html := htmlRender(t, htmlReadFixture(t))
	text := htmlpkg.UnescapeString(html) // html/template writes + as &#43;
	if !strings.Contains(html, "l_quantity &lt; 24") {
		t.Error("SQL text is not escaped")
	}
	got := htmlIDs(html)
	for _, id := range htmlFixtureIDs {
		if !slices.Contains(got, id) {
			t.Errorf("id %q missing", id)
		}
	}
	seen := map[string]bool{}
	for _, id := range got {
		if seen[id] {
			t.Errorf("id %q repeated", id)
		}
		seen[id] = true
	}
	for _, want := range []string{
		// provenance
		"20261129T235904Z-1a2b3c4d", "2026-11-29T23:59:04Z", "perfrun 0.3.0 (git 42796b1), go1.26.8",
		"AMD EPYC 7B13", "<td>2</td>", "8.0 GiB", "linux 6.1.0-27-amd64",
		"PostgreSQL 15.18 (Debian 15.18-0+deb12u1)", "<th>shared_buffers</th><td>128MB</td>",
		"<th>scale factor</th><td>0.1</td>", "200 timed, 20 discarded", "30.0 s per call",
		"1, 4, 16 clients, 5.00 s per level", "95% percentile-bootstrap intervals, 10000 resamples, seed 1",
		// latency: select1 native warm p50 48200 ns, CI [46754, 49646]
		`<td>48.2 µs</td><td title="bootstrap seed 1">[46.8 µs, 49.6 µs]</td>`, "n=10 is too small for p95",
		// decomposition: select1 server warm segments
		"<td>6.1 µs</td><td>1.2 µs</td><td>3.3 µs</td><td>47.1 µs</td><td>2.5 µs</td><td>60.2 µs</td><td>-</td><td>61.5 µs</td>",
		"select1 t_db: 47.1 µs (78.2% of the segments)",
		// overhead: select1 server warm c=1
		`class="slower">+13.3 µs</td><td>[+10.3 µs, +16.3 µs]</td><td>+27.6%</td>`,
		// sweep: select1 native at 16 clients
		"186722 req/s",
		// tdb
		"✓ matches", "✗ differs", "1 of 2 queries",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(html, "<svg "); n != 7 {
		t.Errorf("%d charts, want 7 (2 latency, 2 throughput, 2 latency vs clients, 1 decomposition)", n)
	}
	// Self-contained: nothing to fetch.
	for _, bad := range []string{"http://", "https://", "src=", "<link", "@import"} {
		if strings.Contains(html, bad) {
			t.Errorf("report contains %q; it must not load anything", bad)
		}
	}
	if again := htmlRender(t, htmlReadFixture(t)); again != html {
		t.Error("two renderings of the same records differ")
	}
}

func TestRenderHTMLEscapes(t *testing.T) {
	evil := `</script><script>alert(1)</script>`
	recs := &Records{
		Run: &Run{
			Header:   Header{RunID: `run"><b>x</b>`},
			Host:     Host{Hostname: "<b>host</b>"},
			Postgres: Postgres{Settings: map[string]string{"<k>": `"&'`}},
			Paths:    []string{"native", "<img src=x onerror=alert(2)>"},
			Queries:  []Query{{ID: "q<1>", SQL: evil}},
			Args:     []string{"perfrun", evil},
		},
		Stats: []Stat{
			{Path: "native", Query: "q<1>", Phase: PhaseWarm, Concurrency: 1, N: 30, P50NS: 1000, P95NS: 2000, P99NS: 3000, Warnings: []string{"<i>warn</i>"}},
			{Path: "<img src=x onerror=alert(2)>", Query: "q<1>", Phase: PhaseWarm, Concurrency: 4, N: 30, P50NS: 1000, ThroughputRPS: htmlPtr(10.0)},
		},
		Overheads: []Overhead{{Path: "<img src=x onerror=alert(2)>", Query: "q<1>", Phase: PhaseWarm, Concurrency: 1}},
		TDBs:      []TDB{{Query: "<q>"}},
	}
	html := htmlRender(t, recs)
	for _, bad := range []string{"<script>alert(1)", "<img src=x", "<b>x</b>", "<b>host</b>", "<i>warn</i>", "<k>", "<q>", `"&'`} {
		if strings.Contains(html, bad) {
			t.Errorf("report contains unescaped %q", bad)
		}
	}
	for _, want := range []string{"&lt;b&gt;host&lt;/b&gt;", "&lt;i&gt;warn&lt;/i&gt;", `id="latency-q_3c_1_3e_"`} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(html, "<script>"); n != 1 {
		t.Errorf("%d <script> elements, want only the page's own", n)
	}
}

func htmlPtr[T any](v T) *T { return &v }

func TestRenderHTMLEmpty(t *testing.T) {
	for name, recs := range map[string]*Records{"nil": nil, "empty": {}} {
		html := htmlRender(t, recs)
		for _, want := range []string{
			"No run record in this file", "No latency statistics in this file", "No concurrency sweep in this run",
			"No server-path segments in this run", "No overhead records", "No t_db records",
		} {
			if !strings.Contains(html, want) {
				t.Errorf("%s: report lacks %q", name, want)
			}
		}
		got := htmlIDs(html)
		for _, id := range []string{"provenance", "latency", "throughput", "latency-vs-concurrency", "decomp", "overhead", "tdb"} {
			if !slices.Contains(got, id) {
				t.Errorf("%s: id %q missing", name, id)
			}
		}
	}
}

// A run without a sweep, a server path or native comparisons: the
// latency section renders, the rest says what is missing.
func TestRenderHTMLPartial(t *testing.T) {
	full := htmlReadFixture(t)
	recs := &Records{Run: full.Run}
	for _, s := range full.Stats {
		if s.Concurrency == 1 && s.Path != PathServer {
			recs.Stats = append(recs.Stats, s)
		}
	}
	// A group whose every call timed out, and a query with cold samples only.
	recs.Stats = append(recs.Stats,
		Stat{Path: "e2e-stdio", Query: "select1", Phase: PhaseWarm, Concurrency: 1, Timeouts: 5, Warnings: []string{"no ok samples"}},
		Stat{Path: "native", Query: "coldonly", Phase: PhaseCold, Concurrency: 1, N: 3, P50NS: 5e6, P95NS: 6e6, P99NS: 7e6})
	html := htmlRender(t, recs)
	for _, want := range []string{"latency-select1", "latency-chart-q06", "latency-chart-coldonly", "5 timeouts, 0 errors", "native (cold)",
		"No concurrency sweep in this run", "No server-path segments in this run", "No overhead records", "No t_db records"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestHTMLTicks(t *testing.T) {
	if got := htmlLinearTicks(83, 5); !slices.Equal(got, []float64{0, 20, 40, 60, 80, 100}) {
		t.Errorf("linear ticks for 83: %v", got)
	}
	if got := htmlLogTicks(1e4, 1e6); !slices.Equal(got, []float64{1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6}) {
		t.Errorf("log ticks 1e4..1e6: %v", got)
	}
	if sc, _ := htmlNewValueScale(50e3, 400e3, 0, 100); sc.log {
		t.Error("8x spread got a log scale")
	}
	sc, ticks := htmlNewValueScale(50e3, 20e6, 0, 100)
	if !sc.log || ticks[0] != 1e4 || ticks[len(ticks)-1] != 1e8 {
		t.Errorf("400x spread: log %v ticks %v", sc.log, ticks)
	}
	if x := sc.at(1e6); x != 50 {
		t.Errorf("1e6 on a 1e4..1e8 log scale of 100 px is at %v, want 50", x)
	}
}

func TestHTMLFormat(t *testing.T) {
	for _, c := range []struct {
		ns   float64
		want string
	}{{0, "0 ns"}, {999, "999 ns"}, {48200, "48.2 µs"}, {9996, "10.0 µs"}, {412000, "412 µs"}, {18.45e6, "18.4 ms"}, {-13300, "-13.3 µs"}, {30e9, "30.0 s"}} {
		if got := htmlFmtDur(c.ns); got != c.want {
			t.Errorf("htmlFmtDur(%v) = %q, want %q", c.ns, got, c.want)
		}
	}
	two := []Stat{{CILevel: 0.95, Resamples: 100, Seed: 1}, {CILevel: 0.95, Resamples: 100, Seed: 2}}
	if got := htmlBootstrapSettings(two); got != "95% percentile-bootstrap intervals, 100 resamples, a seed per group (hover over an interval for its seed)" {
		t.Errorf("htmlBootstrapSettings, two seeds = %q", got)
	}
	if got := htmlElementID("latency-", "q 1/<x>"); got != "latency-q_20_1_2f__3c_x_3e_" {
		t.Errorf("htmlElementID = %q", got)
	}
}
