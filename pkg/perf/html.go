// HTML report of a summary file (perfhtml): one self-contained page with
// inline CSS and SVG charts, absolute numbers first and relative ones after.

package perf

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed htmltmpl/page.html.tmpl
var htmlPageTemplateText string

//go:embed htmltmpl/style.css
var htmlPageCSS string

var htmlPageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{"num": htmlNum}).Parse(htmlPageTemplateText))

// RenderHTML writes the report for recs to w. Sections without data (no
// sweep, no server path, no run record) render as a one-line note, so any
// file ReadAll accepts renders.
func RenderHTML(w io.Writer, recs *Records) error {
	if recs == nil {
		recs = new(Records)
	}
	p := htmlBuildPage(recs)
	var buf bytes.Buffer
	if err := htmlPageTemplate.Execute(&buf, p); err != nil {
		return fmt.Errorf("render html: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// htmlPage is everything the template shows, formatted.
type htmlPage struct {
	Title    string
	CSS      template.CSS
	Prov     *htmlProvView
	Stats    string // bootstrap settings, for reproducing the intervals
	Paths    []htmlLegendItem
	Latency  []htmlQueryLatency
	Sweep    []htmlQuerySweep
	Decomp   *htmlDecompView
	Overhead []htmlOverheadRow
	TDB      *htmlTdbView
}

type htmlLegendItem struct {
	Name  string
	Class string
}

type htmlKv struct{ K, V string }

type htmlProvView struct {
	RunID    string
	Rows     []htmlKv
	Settings []htmlKv
	Queries  []Query
	Args     string
}

type htmlQueryLatency struct {
	ID    string // id attribute
	Query string
	Info  string // weight, size
	SQL   string
	Rows  []htmlLatencyRow
	Chart *htmlSvgScene
	Note  string
}

type htmlLatencyRow struct {
	Path, Class, Phase string
	N, Failed          string
	P50, P50CI         string
	P95, P95CI         string
	P99, Min, Max      string
	Seed               string // bootstrap seed, as a tooltip
	Warnings           []string
}

type htmlQuerySweep struct {
	Query      string
	Throughput *htmlSvgScene
	Latency    *htmlSvgScene
	Rows       []htmlSweepRow
}

type htmlSweepRow struct {
	Path, Class, Phase, Clients string
	RPS, P50, P95, Errors       string
}

type htmlDecompView struct {
	Chart   htmlSvgScene
	Legend  []htmlLegendItem
	Rows    []htmlDecompRow
	Missing []string // queries without server segments
}

type htmlDecompRow struct {
	Query, Phase string
	Segments     []string // µs, in segmentNames order
	Overlap      string   // µs of t_db spent serializing as rows arrived; "-" when unknown
	Sum, P50     string
}

type htmlOverheadRow struct {
	Query, Path, Class, Phase, Clients string
	Native, PathP50, Delta, DeltaCI    string
	Rel, Throughput                    string
	Paired                             string // paired median of per-iteration ratios, with its interval; "–" when none
	Own                                string // the path's own time outside the database exchange, and its share; "–" when unknown
	Slower, Faster                     bool   // the interval excludes 0
}

type htmlTdbView struct {
	Rows    []htmlTdbRow
	Summary string
}

type htmlTdbRow struct {
	Query, Native, TDB, Diff, Rel, Allowed string
	OK                                     bool
}

// htmlSegmentNames are the server path's executor segments in execution order.
var htmlSegmentNames = []string{"t_parse", "t_pool", "t_txn", "t_db", "t_serialize"}

func htmlSegmentValues(s *Segments) []int64 {
	return []int64{s.TParse, s.TPool, s.TTxn, s.TDB, s.TSerialize}
}

// htmlSeriesClasses is how many path colours style.css defines (p0…p7).
const htmlSeriesClasses = 8

func htmlBuildPage(recs *Records) *htmlPage {
	p := &htmlPage{Title: "Benchmark report", CSS: template.CSS(htmlPageCSS)}
	if recs.Run != nil {
		p.Title = "Benchmark report " + recs.Run.RunID
		p.Prov = htmlProvenance(recs.Run)
	}
	paths := htmlPathOrder(recs)
	class := func(path string) string {
		return "p" + strconv.Itoa(slices.Index(paths, path)%htmlSeriesClasses)
	}
	for _, path := range paths {
		p.Paths = append(p.Paths, htmlLegendItem{Name: path, Class: class(path)})
	}
	queries := htmlQueryOrder(recs)
	p.Stats = htmlBootstrapSettings(recs.Stats)
	p.Latency = htmlLatencySection(recs, queries, paths, class)
	p.Sweep = htmlSweepSection(recs, queries, paths, class)
	p.Decomp = htmlDecompSection(recs, queries)
	p.Overhead = htmlOverheadSection(recs, queries, paths, class)
	p.TDB = htmlTdbSection(recs, queries)
	return p
}

func htmlProvenance(r *Run) *htmlProvView {
	v := &htmlProvView{RunID: r.RunID, Queries: r.Queries, Args: strings.Join(r.Args, " ")}
	add := func(k, val string) { v.Rows = append(v.Rows, htmlKv{k, val}) }
	add("run id", r.RunID)
	if r.StartedAt.IsZero() {
		add("started", "unknown")
	} else {
		add("started", r.StartedAt.UTC().Format(time.RFC3339))
	}
	tool := strings.TrimSpace(r.Tool.Name + " " + r.Tool.Version)
	if r.Tool.GitSHA != "" {
		tool += " (git " + r.Tool.GitSHA + ")"
	}
	if r.Tool.GoVersion != "" {
		tool += ", " + r.Tool.GoVersion
	}
	add("tool", htmlOrUnknown(tool))
	add("CPU", htmlOrUnknown(r.Host.CPUModel))
	add("cores", htmlCountOrUnknown(int64(r.Host.Cores)))
	add("memory", htmlBytesOrUnknown(r.Host.MemBytes))
	add("OS", htmlOrUnknown(strings.TrimSpace(r.Host.OS+" "+r.Host.Kernel)))
	add("host name", htmlOrUnknown(r.Host.Hostname))
	add("PostgreSQL", htmlOrUnknown(r.Postgres.Version))
	if r.ScaleFactor == nil {
		add("scale factor", "unknown")
	} else {
		add("scale factor", strconv.FormatFloat(*r.ScaleFactor, 'g', -1, 64))
	}
	add("iterations / warmup", fmt.Sprintf("%d timed, %d discarded per query and path", r.Iterations, r.Warmup))
	if r.TimeoutMS > 0 {
		add("timeout", htmlFmtDur(float64(r.TimeoutMS)*1e6)+" per call (also the statement timeout)")
	} else {
		add("timeout", "none")
	}
	if len(r.Concurrency) > 0 {
		cs := make([]string, len(r.Concurrency))
		for i, c := range r.Concurrency {
			cs[i] = strconv.Itoa(c)
		}
		add("concurrency sweep", strings.Join(cs, ", ")+" clients, "+htmlFmtDur(float64(r.SweepDurationNS))+" per level")
	} else {
		add("concurrency sweep", "none")
	}
	add("paths", htmlOrUnknown(strings.Join(r.Paths, ", ")))
	keys := make([]string, 0, len(r.Postgres.Settings))
	for k := range r.Postgres.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v.Settings = append(v.Settings, htmlKv{k, r.Postgres.Settings[k]})
	}
	return v
}

// htmlPathOrder lists the run's paths, then any other path the records name,
// in order of appearance.
func htmlPathOrder(recs *Records) []string {
	var out []string
	add := func(p string) {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if recs.Run != nil {
		for _, p := range recs.Run.Paths {
			add(p)
		}
	}
	for _, s := range recs.Stats {
		add(s.Path)
	}
	for _, o := range recs.Overheads {
		add(o.Path)
	}
	return out
}

// htmlQueryOrder lists the run's queries, then any other query the records name.
func htmlQueryOrder(recs *Records) []string {
	var out []string
	add := func(q string) {
		if q != "" && !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	if recs.Run != nil {
		for _, q := range recs.Run.Queries {
			add(q.ID)
		}
	}
	for _, s := range recs.Stats {
		add(s.Query)
	}
	for _, o := range recs.Overheads {
		add(o.Query)
	}
	for _, t := range recs.TDBs {
		add(t.Query)
	}
	return out
}

func htmlBootstrapSettings(stats []Stat) string {
	type setting struct {
		level     float64
		resamples int
	}
	var order []setting
	seeds := map[setting]map[uint64]bool{}
	for _, s := range stats {
		if s.Resamples == 0 {
			continue
		}
		k := setting{s.CILevel, s.Resamples}
		if seeds[k] == nil {
			seeds[k] = map[uint64]bool{}
			order = append(order, k)
		}
		seeds[k][s.Seed] = true
	}
	var out []string
	for _, k := range order {
		d := fmt.Sprintf("%s percentile-bootstrap intervals, %d resamples", htmlFmtLevel(k.level), k.resamples)
		if len(seeds[k]) == 1 {
			for seed := range seeds[k] {
				d += fmt.Sprintf(", seed %d", seed)
			}
		} else {
			d += ", a seed per group (hover over an interval for its seed)"
		}
		out = append(out, d)
	}
	return strings.Join(out, "; ")
}

func htmlFmtLevel(l float64) string {
	if l <= 0 {
		return "unknown-level"
	}
	return strconv.FormatFloat(100*l, 'g', 4, 64) + "%"
}

// htmlPhaseRank puts warm before cold.
func htmlPhaseRank(ph string) int {
	if ph == PhaseWarm {
		return 0
	}
	return 1
}

// htmlElementID makes s usable in an id attribute: letters and digits are
// kept, any other byte becomes _XX_ (its hex), so distinct names keep
// distinct ids. '-' is escaped too: the prefixes and the page's fixed ids
// are '-'-joined words, and a kept '-' would let the query "chart-x" take
// the id of query "x"'s chart, or "vs-concurrency" a fixed block's.
func htmlElementID(prefix, s string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; i < len(s); i++ {
		// Letters and digits as they are, every other byte as _XX_ (hex),
		// so that distinct ids stay distinct ("q.1", "q-1", "q_2d_1").
		if c := s[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "_%02x_", c)
		}
	}
	return b.String()
}

func htmlLatencySection(recs *Records, queries, paths []string, class func(string) string) []htmlQueryLatency {
	info := map[string]Query{}
	if recs.Run != nil {
		for _, q := range recs.Run.Queries {
			info[q.ID] = q
		}
	}
	var out []htmlQueryLatency
	for _, q := range queries {
		ql := htmlQueryLatency{ID: htmlElementID("latency-", q), Query: q, SQL: info[q].SQL}
		qi := info[q]
		var parts []string
		for _, s := range recs.Stats {
			if s.Query == q && (qi.Weight == "" || qi.Size == "") {
				qi.Weight, qi.Size = s.Weight, s.Size
				break
			}
		}
		if qi.Weight != "" {
			parts = append(parts, "weight "+qi.Weight)
		}
		if qi.Size != "" {
			parts = append(parts, "size "+qi.Size)
		}
		ql.Info = strings.Join(parts, ", ")
		var stats []Stat
		for _, s := range recs.Stats {
			if s.Query == q && s.Concurrency <= 1 {
				stats = append(stats, s)
			}
		}
		sort.SliceStable(stats, func(i, j int) bool {
			a, b := stats[i], stats[j]
			if pa, pb := slices.Index(paths, a.Path), slices.Index(paths, b.Path); pa != pb {
				return pa < pb
			}
			return htmlPhaseRank(a.Phase) < htmlPhaseRank(b.Phase)
		})
		if len(stats) == 0 {
			ql.Note = "no single-client latency for this query"
			out = append(out, ql)
			continue
		}
		var bars []htmlBarRow
		charted := map[string]bool{}
		for _, s := range stats {
			ql.Rows = append(ql.Rows, htmlLatencyRowOf(s, class(s.Path)))
			if charted[s.Path] || s.N == 0 {
				continue
			}
			charted[s.Path] = true // warm sorts first; cold only when no warm
			label := s.Path
			if s.Phase != PhaseWarm {
				label += " (" + s.Phase + ")"
			}
			bars = append(bars, htmlBarRow{
				Label: label, Class: class(s.Path),
				P50: float64(s.P50NS), Lo: float64(s.P50CINS[0]), Hi: float64(s.P50CINS[1]),
				HasCI: s.P50CINS[1] > 0,
				P95:   float64(s.P95NS), P99: float64(s.P99NS),
				Title: fmt.Sprintf("%s %s, %s: p50 %s (CI %s), p95 %s, p99 %s, n=%d", q, s.Path, s.Phase,
					htmlFmtDur(float64(s.P50NS)), htmlFmtCI(s.P50CINS), htmlFmtDur(float64(s.P95NS)), htmlFmtDur(float64(s.P99NS)), s.N),
			})
		}
		if len(bars) > 0 {
			c := htmlLatencyBars(htmlElementID("latency-chart-", q), "latency of "+q+" per path", bars, htmlFmtDurTick)
			ql.Chart = &c
		}
		out = append(out, ql)
	}
	return out
}

func htmlLatencyRowOf(s Stat, class string) htmlLatencyRow {
	r := htmlLatencyRow{Path: s.Path, Class: class, Phase: s.Phase, N: strconv.Itoa(s.N), Warnings: s.Warnings}
	if s.Timeouts+s.Errors > 0 {
		r.Failed = fmt.Sprintf("%d timeouts, %d errors", s.Timeouts, s.Errors)
	}
	if s.N == 0 {
		r.P50, r.P95, r.P99, r.Min, r.Max = "–", "–", "–", "–", "–"
		return r
	}
	if s.Resamples > 0 {
		r.Seed = fmt.Sprintf("bootstrap seed %d", s.Seed)
	}
	r.P50, r.P50CI = htmlFmtDur(float64(s.P50NS)), htmlFmtCI(s.P50CINS)
	r.P95, r.P95CI = htmlFmtDur(float64(s.P95NS)), htmlFmtCI(s.P95CINS)
	r.P99 = htmlFmtDur(float64(s.P99NS))
	r.Min, r.Max = htmlFmtDur(float64(s.MinNS)), htmlFmtDur(float64(s.MaxNS))
	return r
}

// htmlIsSweep tells whether a stat belongs to the concurrency sweep.
func htmlIsSweep(s Stat) bool { return s.Concurrency > 1 || s.ThroughputRPS != nil }

func htmlSweepSection(recs *Records, queries, paths []string, class func(string) string) []htmlQuerySweep {
	var out []htmlQuerySweep
	for _, q := range queries {
		sweep := false
		for _, s := range recs.Stats {
			if s.Query == q && htmlIsSweep(s) {
				sweep = true
				break
			}
		}
		if !sweep {
			continue
		}
		qs := htmlQuerySweep{Query: q}
		var tput, lat []htmlLineSeries
		for _, path := range paths {
			// One stat per concurrency level: warm when there is one.
			byConc := map[int]Stat{}
			for _, s := range recs.Stats {
				if s.Query != q || s.Path != path || s.N == 0 && s.ThroughputRPS == nil {
					continue
				}
				if old, ok := byConc[s.Concurrency]; !ok || htmlPhaseRank(s.Phase) < htmlPhaseRank(old.Phase) {
					byConc[s.Concurrency] = s
				}
			}
			concs := make([]int, 0, len(byConc))
			for c := range byConc {
				concs = append(concs, c)
			}
			sort.Ints(concs)
			ts := htmlLineSeries{Name: path, Class: class(path)}
			ls := htmlLineSeries{Name: path, Class: class(path)}
			for _, c := range concs {
				s := byConc[c]
				row := htmlSweepRow{Path: path, Class: class(path), Phase: s.Phase, Clients: strconv.Itoa(c), RPS: "–", P50: "–", P95: "–"}
				if s.ThroughputRPS != nil {
					row.RPS = htmlFmtRate(*s.ThroughputRPS)
					ts.Points = append(ts.Points, htmlLinePoint{X: c, Y: *s.ThroughputRPS,
						Title: fmt.Sprintf("%s %s, %d clients: %s", q, path, c, htmlFmtRate(*s.ThroughputRPS))})
				}
				if s.N > 0 {
					row.P50, row.P95 = htmlFmtDur(float64(s.P50NS)), htmlFmtDur(float64(s.P95NS))
					ls.Points = append(ls.Points, htmlLinePoint{X: c, Y: float64(s.P50NS),
						Title: fmt.Sprintf("%s %s, %d clients: p50 %s (CI %s)", q, path, c, htmlFmtDur(float64(s.P50NS)), htmlFmtCI(s.P50CINS))})
				}
				if s.LoadErrors != nil && *s.LoadErrors > 0 {
					row.Errors = strconv.FormatInt(*s.LoadErrors, 10)
				}
				qs.Rows = append(qs.Rows, row)
			}
			if len(ts.Points) > 0 {
				tput = append(tput, ts)
			}
			if len(ls.Points) > 0 {
				lat = append(lat, ls)
			}
		}
		if len(tput) > 0 {
			c := htmlLineChart(htmlElementID("throughput-", q), "throughput of "+q+" by clients", "clients", tput, htmlFmtRateTick)
			qs.Throughput = &c
		}
		if len(lat) > 0 {
			c := htmlLineChart(htmlElementID("latency-vs-concurrency-", q), "p50 latency of "+q+" by clients", "clients", lat, htmlFmtDurTick)
			qs.Latency = &c
		}
		out = append(out, qs)
	}
	return out
}

func htmlDecompSection(recs *Records, queries []string) *htmlDecompView {
	v := &htmlDecompView{}
	for i, name := range htmlSegmentNames {
		v.Legend = append(v.Legend, htmlLegendItem{Name: name, Class: "seg" + strconv.Itoa(i)})
	}
	var rows []htmlStackRow
	for _, q := range queries {
		var best *Stat
		for i := range recs.Stats {
			s := &recs.Stats[i]
			if s.Query != q || s.Path != PathServer || s.Concurrency > 1 || s.SegmentsP50NS == nil {
				continue
			}
			if best == nil || htmlPhaseRank(s.Phase) < htmlPhaseRank(best.Phase) {
				best = s
			}
		}
		if best == nil {
			v.Missing = append(v.Missing, q)
			continue
		}
		vals := htmlSegmentValues(best.SegmentsP50NS)
		row := htmlDecompRow{Query: q, Phase: best.Phase, P50: htmlFmtUS(float64(best.P50NS)), Overlap: "-"}
		if o := best.SerializeOverlapP50NS; o != nil {
			row.Overlap = htmlFmtUS(float64(*o))
		}
		sr := htmlStackRow{Label: q}
		var sum int64
		for _, x := range vals {
			sum += x
		}
		for i, x := range vals {
			row.Segments = append(row.Segments, htmlFmtUS(float64(x)))
			pct := 0.0
			if sum > 0 {
				pct = 100 * float64(x) / float64(sum)
			}
			sr.Parts = append(sr.Parts, htmlStackPart{Value: float64(x), Class: "seg" + strconv.Itoa(i),
				Title: fmt.Sprintf("%s %s: %s (%.1f%% of the segments)", q, htmlSegmentNames[i], htmlFmtUS(float64(x)), pct)})
		}
		row.Sum = htmlFmtUS(float64(sum))
		v.Rows = append(v.Rows, row)
		if best.Phase != PhaseWarm {
			sr.Label += " (" + best.Phase + ")"
		}
		rows = append(rows, sr)
	}
	if len(rows) == 0 {
		return nil
	}
	v.Chart = htmlStackedBars("decomp-chart", "server path segments per query, 100% each", rows)
	return v
}

func htmlOverheadSection(recs *Records, queries, paths []string, class func(string) string) []htmlOverheadRow {
	ov := slices.Clone(recs.Overheads)
	sort.SliceStable(ov, func(i, j int) bool {
		a, b := ov[i], ov[j]
		if qa, qb := slices.Index(queries, a.Query), slices.Index(queries, b.Query); qa != qb {
			return qa < qb
		}
		if pa, pb := slices.Index(paths, a.Path), slices.Index(paths, b.Path); pa != pb {
			return pa < pb
		}
		if a.Phase != b.Phase {
			return htmlPhaseRank(a.Phase) < htmlPhaseRank(b.Phase)
		}
		return a.Concurrency < b.Concurrency
	})
	var out []htmlOverheadRow
	for _, o := range ov {
		r := htmlOverheadRow{
			Query: o.Query, Path: o.Path, Class: class(o.Path), Phase: o.Phase, Clients: strconv.Itoa(o.Concurrency),
			Native: htmlFmtDur(float64(o.NativeP50NS)), PathP50: htmlFmtDur(float64(o.PathP50NS)),
			Delta: htmlFmtSignedDur(float64(o.DeltaP50NS)), DeltaCI: htmlFmtSignedCI(o.DeltaP50CINS),
			Rel:        htmlFmtRel(o.RelP50),
			Throughput: "–",
			Paired:     "–",
			Own:        "–",
			Slower:     o.DeltaP50CINS[0] > 0,
			Faster:     o.DeltaP50CINS[1] < 0,
		}
		if o.ThroughputRatio != nil {
			r.Throughput = strconv.FormatFloat(*o.ThroughputRatio, 'f', 2, 64) + "×"
		}
		if o.OwnP50NS != nil && o.OwnRelP50 != nil {
			r.Own = fmt.Sprintf("%s (%+.3f%%)", htmlFmtDur(float64(*o.OwnP50NS)), *o.OwnRelP50*100)
		}
		if p := pairedText(&o); p != "" {
			r.Paired = p
		}
		out = append(out, r)
	}
	return out
}

func htmlTdbSection(recs *Records, queries []string) *htmlTdbView {
	if len(recs.TDBs) == 0 {
		return nil
	}
	t := slices.Clone(recs.TDBs)
	sort.SliceStable(t, func(i, j int) bool { return slices.Index(queries, t[i].Query) < slices.Index(queries, t[j].Query) })
	v := &htmlTdbView{}
	ok := 0
	for _, r := range t {
		diff := float64(r.ServerTDBP50NS - r.NativeP50NS)
		rel := "–"
		if r.NativeP50NS > 0 {
			rel = htmlFmtRel(diff / float64(r.NativeP50NS))
		}
		allowed := math.Max(r.ToleranceRel*float64(r.NativeP50NS), float64(r.FloorNS))
		v.Rows = append(v.Rows, htmlTdbRow{
			Query: r.Query, Native: htmlFmtDur(float64(r.NativeP50NS)), TDB: htmlFmtDur(float64(r.ServerTDBP50NS)),
			Diff: htmlFmtSignedDur(diff), Rel: rel,
			Allowed: fmt.Sprintf("±%s (%s, floor %s)", htmlFmtDur(allowed), htmlFmtRelAbs(r.ToleranceRel), htmlFmtDur(float64(r.FloorNS))),
			OK:      r.TDBMatchesNative,
		})
		if r.TDBMatchesNative {
			ok++
		}
	}
	v.Summary = fmt.Sprintf("%d of %d queries: the server's t_db matches native", ok, len(t))
	return v
}

func htmlOrUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func htmlCountOrUnknown(n int64) string {
	if n <= 0 {
		return "unknown"
	}
	return strconv.FormatInt(n, 10)
}

func htmlBytesOrUnknown(b int64) string {
	if b <= 0 {
		return "unknown"
	}
	const gib = 1 << 30
	if b >= gib {
		return strconv.FormatFloat(float64(b)/gib, 'f', 1, 64) + " GiB"
	}
	return strconv.FormatFloat(float64(b)/(1<<20), 'f', 0, 64) + " MiB"
}

// htmlFmtDur formats nanoseconds with three significant digits in ns, µs, ms
// or s.
func htmlFmtDur(ns float64) string {
	a := math.Abs(ns)
	switch {
	case a < 1e3:
		return strconv.FormatFloat(ns, 'f', 0, 64) + " ns"
	case a < 1e6:
		return htmlSig3(ns/1e3) + " µs"
	case a < 1e9:
		return htmlSig3(ns/1e6) + " ms"
	default:
		return htmlSig3(ns/1e9) + " s"
	}
}

func htmlFmtSignedDur(ns float64) string {
	if ns > 0 {
		return "+" + htmlFmtDur(ns)
	}
	return htmlFmtDur(ns)
}

func htmlSig3(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 99.95:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 9.995:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// htmlFmtDurTick formats an axis tick, which is a round number: no trailing
// zeros.
func htmlFmtDurTick(ns float64) string {
	switch a := math.Abs(ns); {
	case a == 0:
		return "0"
	case a < 1e3:
		return strconv.FormatFloat(ns, 'g', 3, 64) + " ns"
	case a < 1e6:
		return strconv.FormatFloat(ns/1e3, 'g', 3, 64) + " µs"
	case a < 1e9:
		return strconv.FormatFloat(ns/1e6, 'g', 3, 64) + " ms"
	default:
		return strconv.FormatFloat(ns/1e9, 'g', 3, 64) + " s"
	}
}

// htmlFmtUS formats nanoseconds as microseconds with one decimal.
func htmlFmtUS(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 1, 64) + " µs" }

func htmlFmtCI(ci [2]int64) string {
	if ci == [2]int64{} {
		return "–"
	}
	return "[" + htmlFmtDur(float64(ci[0])) + ", " + htmlFmtDur(float64(ci[1])) + "]"
}

func htmlFmtSignedCI(ci [2]int64) string {
	if ci == [2]int64{} {
		return "–"
	}
	return "[" + htmlFmtSignedDur(float64(ci[0])) + ", " + htmlFmtSignedDur(float64(ci[1])) + "]"
}

// htmlFmtRel formats a ratio as a signed percentage.
func htmlFmtRel(r float64) string {
	s := strconv.FormatFloat(100*r, 'f', 1, 64) + "%"
	if r > 0 {
		s = "+" + s
	}
	return s
}

func htmlFmtRelAbs(r float64) string { return strconv.FormatFloat(100*r, 'g', 3, 64) + "%" }

func htmlFmtRate(rps float64) string { return htmlSig3Rate(rps) + " req/s" }

func htmlSig3Rate(v float64) string {
	if math.Abs(v) >= 1000 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return htmlSig3(v)
}

// htmlFmtRateTick formats a round requests-per-second axis tick with a k or
// M suffix.
func htmlFmtRateTick(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M/s"
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k/s"
	default:
		return strconv.FormatFloat(v, 'g', 3, 64) + "/s"
	}
}

func htmlSortedInts(set map[int]bool) []int {
	out := make([]int, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Ints(out)
	return out
}
