// SVG chart geometry for the HTML report: scales, ticks and the shapes of
// the bar, line and 100% stacked charts. The shapes are plain data; the
// template in htmltmpl/page.html.tmpl draws them, so every text is escaped.

package perf

import (
	"math"
	"strconv"
)

// htmlSvgScene is one chart: shapes in drawing order, with classes that
// htmltmpl/style.css colours. Titles become tooltips.
type htmlSvgScene struct {
	ID            string // id attribute of the <svg>
	Label         string // aria-label
	Width, Height float64
	Grid          []htmlSvgLine // drawn first, under everything
	Rects         []htmlSvgRect
	Lines         []htmlSvgLine
	Polylines     []htmlSvgPolyline
	Circles       []htmlSvgCircle
	Marks         []htmlSvgPath
	Texts         []htmlSvgText
}

type htmlSvgRect struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

type htmlSvgLine struct {
	X1, Y1, X2, Y2 float64
	Class          string
	Title          string
}

type htmlSvgPolyline struct {
	Points string
	Class  string
}

type htmlSvgCircle struct {
	CX, CY, R float64
	Class     string
	Title     string
}

type htmlSvgPath struct {
	D     string
	Class string
	Title string
}

type htmlSvgText struct {
	X, Y   float64
	Text   string
	Anchor string // start, middle or end
	Class  string
}

// htmlScale maps data values to pixels on one axis, linearly or by log10.
type htmlScale struct {
	log        bool
	lo, hi     float64 // data range (both > 0 when log)
	pixLo, pix float64 // pixel position of lo, and pixel length of the range
}

func (s htmlScale) at(v float64) float64 {
	var f float64
	if s.log {
		if v <= 0 {
			v = s.lo
		}
		f = (math.Log10(v) - math.Log10(s.lo)) / (math.Log10(s.hi) - math.Log10(s.lo))
	} else {
		f = (v - s.lo) / (s.hi - s.lo)
	}
	return s.pixLo + math.Max(0, math.Min(1, f))*s.pix
}

// htmlLogSpread is the max/min ratio above which a value axis switches to a
// log scale: beyond it the smaller values would be a few pixels wide.
const htmlLogSpread = 30

// htmlNewValueScale chooses a scale for positive values in [min, max]:
// linear from 0 when they are of one magnitude, log10 when they span more
// than htmlLogSpread. It returns the scale and its tick values.
func htmlNewValueScale(min, max, pixLo, pix float64) (htmlScale, []float64) {
	if !(max > 0) {
		max = 1
	}
	if min > 0 && max/min > htmlLogSpread {
		lo := math.Pow(10, math.Floor(math.Log10(min)))
		hi := math.Pow(10, math.Ceil(math.Log10(max)))
		if hi <= lo {
			hi = lo * 10
		}
		return htmlScale{log: true, lo: lo, hi: hi, pixLo: pixLo, pix: pix}, htmlLogTicks(lo, hi)
	}
	ticks := htmlLinearTicks(max, 5)
	return htmlScale{lo: 0, hi: ticks[len(ticks)-1], pixLo: pixLo, pix: pix}, ticks
}

// htmlLinearTicks returns 0, step, 2*step, … up to the first tick >= max, with
// step 1, 2 or 5 times a power of ten giving about n intervals.
func htmlLinearTicks(max float64, n int) []float64 {
	raw := max / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag * 10
	for _, m := range []float64{1, 2, 5} {
		if raw <= m*mag {
			step = m * mag
			break
		}
	}
	var ticks []float64
	for i := 0; ; i++ {
		v := float64(i) * step
		ticks = append(ticks, v)
		if v >= max*(1-1e-9) {
			return ticks
		}
	}
}

// htmlLogTicks returns 1-2-5 ticks per decade from lo to hi (powers of ten),
// thinned to decades when there are many.
func htmlLogTicks(lo, hi float64) []float64 {
	decades := int(math.Round(math.Log10(hi / lo)))
	mults := []float64{1, 2, 5}
	if decades > 3 {
		mults = []float64{1}
	}
	var ticks []float64
	for d := 0; d <= decades; d++ {
		base := lo * math.Pow(10, float64(d))
		for _, m := range mults {
			if v := base * m; v <= hi*(1+1e-9) {
				ticks = append(ticks, v)
			}
		}
	}
	return ticks
}

// htmlNum formats a pixel coordinate for an attribute.
func htmlNum(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// htmlBarRow is one path's latency in a query's bar chart, in nanoseconds.
type htmlBarRow struct {
	Label       string
	Class       string // series class, pN
	P50, Lo, Hi float64
	P95, P99    float64
	HasCI       bool
	Title       string
}

// Bar chart layout, in pixels.
const (
	htmlChartWidth = 760.0
	htmlBarLeft    = 120.0 // room for path names
	htmlBarRight   = 24.0
	htmlBarRowH    = 26.0
	htmlBarTop     = 8.0
	htmlBarAxisH   = 28.0
)

// htmlLatencyBars draws horizontal p50 bars with CI whiskers and p95/p99 marks.
func htmlLatencyBars(id, label string, rows []htmlBarRow, fmtTick func(float64) string) htmlSvgScene {
	min, max := math.Inf(1), 0.0
	for _, r := range rows {
		for _, v := range []float64{r.P50, r.Lo, r.Hi, r.P95, r.P99} {
			if v > 0 {
				min = math.Min(min, v)
				max = math.Max(max, v)
			}
		}
	}
	if math.IsInf(min, 1) {
		min = 0
	}
	plotH := float64(len(rows)) * htmlBarRowH
	sc, ticks := htmlNewValueScale(min, max, htmlBarLeft, htmlChartWidth-htmlBarLeft-htmlBarRight)
	s := htmlSvgScene{ID: id, Label: label, Width: htmlChartWidth, Height: htmlBarTop + plotH + htmlBarAxisH}
	axisY := htmlBarTop + plotH
	for _, t := range ticks {
		x := sc.at(t)
		s.Grid = append(s.Grid, htmlSvgLine{X1: x, Y1: htmlBarTop, X2: x, Y2: axisY, Class: "grid"})
		s.Texts = append(s.Texts, htmlSvgText{X: x, Y: axisY + 16, Text: fmtTick(t), Anchor: "middle", Class: "tick"})
	}
	s.Lines = append(s.Lines, htmlSvgLine{X1: htmlBarLeft, Y1: axisY, X2: htmlChartWidth - htmlBarRight, Y2: axisY, Class: "axis"})
	if sc.log {
		s.Texts = append(s.Texts, htmlSvgText{X: htmlChartWidth - htmlBarRight, Y: axisY + 27, Text: "log scale", Anchor: "end", Class: "note"})
	}
	base := sc.at(sc.lo)
	for i, r := range rows {
		y := htmlBarTop + float64(i)*htmlBarRowH
		mid := y + htmlBarRowH/2
		s.Texts = append(s.Texts, htmlSvgText{X: htmlBarLeft - 6, Y: mid + 4, Text: r.Label, Anchor: "end", Class: "label"})
		if r.P50 <= 0 {
			continue
		}
		s.Rects = append(s.Rects, htmlSvgRect{X: base, Y: y + 5, W: math.Max(1, sc.at(r.P50)-base), H: htmlBarRowH - 10, Class: "bar " + r.Class, Title: r.Title})
		if r.HasCI {
			x1, x2 := sc.at(r.Lo), sc.at(r.Hi)
			s.Lines = append(s.Lines,
				htmlSvgLine{X1: x1, Y1: mid, X2: x2, Y2: mid, Class: "whisker", Title: r.Title},
				htmlSvgLine{X1: x1, Y1: mid - 6, X2: x1, Y2: mid + 6, Class: "whisker"},
				htmlSvgLine{X1: x2, Y1: mid - 6, X2: x2, Y2: mid + 6, Class: "whisker"})
		}
		if r.P95 > 0 {
			x := sc.at(r.P95)
			s.Marks = append(s.Marks, htmlSvgPath{D: htmlDiamond(x, mid, 4.5), Class: "mark-p95", Title: r.Title})
		}
		if r.P99 > 0 {
			x := sc.at(r.P99)
			s.Marks = append(s.Marks, htmlSvgPath{D: htmlTriangle(x, mid, 5), Class: "mark-p99", Title: r.Title})
		}
	}
	return s
}

func htmlDiamond(x, y, r float64) string {
	return "M" + htmlNum(x) + " " + htmlNum(y-r) + "L" + htmlNum(x+r) + " " + htmlNum(y) + "L" + htmlNum(x) + " " + htmlNum(y+r) + "L" + htmlNum(x-r) + " " + htmlNum(y) + "Z"
}

func htmlTriangle(x, y, r float64) string {
	return "M" + htmlNum(x) + " " + htmlNum(y-r) + "L" + htmlNum(x+r) + " " + htmlNum(y+r) + "L" + htmlNum(x-r) + " " + htmlNum(y+r) + "Z"
}

// htmlLineSeries is one path's line in a concurrency chart.
type htmlLineSeries struct {
	Name   string
	Class  string
	Points []htmlLinePoint
}

type htmlLinePoint struct {
	X     int // concurrency
	Y     float64
	Title string
}

// Line chart layout, in pixels.
const (
	htmlLineLeft   = 80.0
	htmlLineRight  = 24.0
	htmlLineTop    = 12.0
	htmlLineHeight = 240.0
	htmlLineBottom = 44.0
)

// htmlLineChart draws one line per series over the distinct X values, which
// are spaced evenly (concurrency levels are usually powers of two or four).
// The Y axis is linear from 0 or log, as newValueScale decides.
func htmlLineChart(id, label, xLabel string, series []htmlLineSeries, fmtTick func(float64) string) htmlSvgScene {
	xsSet := map[int]bool{}
	min, max := math.Inf(1), 0.0
	for _, se := range series {
		for _, p := range se.Points {
			xsSet[p.X] = true
			if p.Y > 0 {
				min = math.Min(min, p.Y)
				max = math.Max(max, p.Y)
			}
		}
	}
	xs := htmlSortedInts(xsSet)
	if math.IsInf(min, 1) {
		min = 0
	}
	s := htmlSvgScene{ID: id, Label: label, Width: htmlChartWidth, Height: htmlLineTop + htmlLineHeight + htmlLineBottom}
	axisY := htmlLineTop + htmlLineHeight
	ysc, ticks := htmlNewValueScale(min, max, axisY, -htmlLineHeight)
	plotW := htmlChartWidth - htmlLineLeft - htmlLineRight
	xAt := func(x int) float64 {
		for i, v := range xs {
			if v == x {
				if len(xs) == 1 {
					return htmlLineLeft + plotW/2
				}
				return htmlLineLeft + 20 + float64(i)*(plotW-40)/float64(len(xs)-1)
			}
		}
		return htmlLineLeft
	}
	for _, t := range ticks {
		y := ysc.at(t)
		s.Grid = append(s.Grid, htmlSvgLine{X1: htmlLineLeft, Y1: y, X2: htmlChartWidth - htmlLineRight, Y2: y, Class: "grid"})
		s.Texts = append(s.Texts, htmlSvgText{X: htmlLineLeft - 6, Y: y + 4, Text: fmtTick(t), Anchor: "end", Class: "tick"})
	}
	for _, x := range xs {
		px := xAt(x)
		s.Grid = append(s.Grid, htmlSvgLine{X1: px, Y1: htmlLineTop, X2: px, Y2: axisY, Class: "grid"})
		s.Texts = append(s.Texts, htmlSvgText{X: px, Y: axisY + 16, Text: strconv.Itoa(x), Anchor: "middle", Class: "tick"})
	}
	s.Lines = append(s.Lines,
		htmlSvgLine{X1: htmlLineLeft, Y1: axisY, X2: htmlChartWidth - htmlLineRight, Y2: axisY, Class: "axis"},
		htmlSvgLine{X1: htmlLineLeft, Y1: htmlLineTop, X2: htmlLineLeft, Y2: axisY, Class: "axis"})
	s.Texts = append(s.Texts, htmlSvgText{X: htmlLineLeft + plotW/2, Y: axisY + 36, Text: xLabel, Anchor: "middle", Class: "note"})
	if ysc.log {
		s.Texts = append(s.Texts, htmlSvgText{X: htmlChartWidth - htmlLineRight, Y: htmlLineTop + 10, Text: "log scale", Anchor: "end", Class: "note"})
	}
	for _, se := range series {
		pts := ""
		for _, p := range se.Points {
			x, y := xAt(p.X), ysc.at(p.Y)
			if pts != "" {
				pts += " "
			}
			pts += htmlNum(x) + "," + htmlNum(y)
			s.Circles = append(s.Circles, htmlSvgCircle{CX: x, CY: y, R: 4, Class: "dot " + se.Class, Title: p.Title})
		}
		if len(se.Points) > 1 {
			s.Polylines = append(s.Polylines, htmlSvgPolyline{Points: pts, Class: "line " + se.Class})
		}
	}
	return s
}

// htmlStackRow is one 100% bar: parts are drawn left to right in proportion to
// their values.
type htmlStackRow struct {
	Label string
	Parts []htmlStackPart
}

type htmlStackPart struct {
	Value float64
	Class string
	Title string
}

// htmlStackedBars draws one 100%-normalized horizontal bar per row, with the
// percentage written inside parts that are wide enough.
func htmlStackedBars(id, label string, rows []htmlStackRow) htmlSvgScene {
	plotH := float64(len(rows)) * htmlBarRowH
	s := htmlSvgScene{ID: id, Label: label, Width: htmlChartWidth, Height: htmlBarTop + plotH + htmlBarAxisH}
	plotW := htmlChartWidth - htmlBarLeft - htmlBarRight
	axisY := htmlBarTop + plotH
	for _, pct := range []float64{0, 25, 50, 75, 100} {
		x := htmlBarLeft + plotW*pct/100
		s.Grid = append(s.Grid, htmlSvgLine{X1: x, Y1: htmlBarTop, X2: x, Y2: axisY, Class: "grid"})
		s.Texts = append(s.Texts, htmlSvgText{X: x, Y: axisY + 16, Text: strconv.Itoa(int(pct)) + "%", Anchor: "middle", Class: "tick"})
	}
	for i, r := range rows {
		y := htmlBarTop + float64(i)*htmlBarRowH
		s.Texts = append(s.Texts, htmlSvgText{X: htmlBarLeft - 6, Y: y + htmlBarRowH/2 + 4, Text: r.Label, Anchor: "end", Class: "label"})
		total := 0.0
		for _, p := range r.Parts {
			total += math.Max(0, p.Value)
		}
		if total <= 0 {
			continue
		}
		x := htmlBarLeft
		for _, p := range r.Parts {
			if p.Value <= 0 {
				continue
			}
			w := plotW * p.Value / total
			s.Rects = append(s.Rects, htmlSvgRect{X: x, Y: y + 4, W: w, H: htmlBarRowH - 8, Class: "seg " + p.Class, Title: p.Title})
			if w >= 34 {
				s.Texts = append(s.Texts, htmlSvgText{X: x + w/2, Y: y + htmlBarRowH/2 + 4, Text: strconv.Itoa(int(math.Round(100*p.Value/total))) + "%", Anchor: "middle", Class: "inbar"})
			}
			x += w
		}
	}
	return s
}
