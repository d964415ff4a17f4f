// Text rendering of perfstat's summary and comparison, for people.

package perf

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// textNanos formats a duration with three significant digits and a unit:
// 850ns, 12.3µs, 1.23ms, 4.56s.
func textNanos(ns int64) string {
	sign := ""
	v := float64(ns)
	if v < 0 {
		sign, v = "-", -v
	}
	if v < 999.5 {
		return sign + strconv.FormatInt(int64(math.Round(v)), 10) + "ns"
	}
	units := []struct {
		name string
		div  float64
	}{{"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}}
	for i, u := range units {
		x := v / u.div
		if x >= 999.5 && i < len(units)-1 {
			continue
		}
		prec := 2
		switch {
		case x >= 99.95:
			prec = 0
		case x >= 9.995:
			prec = 1
		}
		return sign + strconv.FormatFloat(x, 'f', prec, 64) + u.name
	}
	panic("unreachable")
}

// textSignedNanos is textNanos with a sign always shown.
func textSignedNanos(ns int64) string {
	if ns >= 0 {
		return "+" + textNanos(ns)
	}
	return textNanos(ns)
}

// pairedText formats the paired estimate, "+0.40% [+0.10%, +0.70%] n=39",
// or returns "" when o has none (the dashboard shows the same text).
func pairedText(o *Overhead) string {
	if o.PairedRelP50 == nil || o.PairedRelP50CI == nil {
		return ""
	}
	return fmt.Sprintf("%+.2f%% [%+.2f%%, %+.2f%%] n=%d", *o.PairedRelP50*100,
		o.PairedRelP50CI[0]*100, o.PairedRelP50CI[1]*100, o.PairedN)
}

func textPercent(rel float64) string {
	return fmt.Sprintf("%+.1f%%", rel*100)
}

// textLevel formats a confidence level as a percentage: 95%, 99.9%.
func textLevel(l float64) string {
	return strconv.FormatFloat(l*100, 'f', -1, 64) + "%"
}

// WriteText writes the summary as a table: one row per group, with the
// overhead against native and the t_db verdict on the rows they belong to,
// and the records' warnings as numbered notes below.
func (s *Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	r := s.Run
	fmt.Fprintf(&b, "run %s", r.RunID)
	if r.Tool.Name != "" {
		fmt.Fprintf(&b, "  %s %s", r.Tool.Name, r.Tool.Version)
	}
	if r.ScaleFactor != nil {
		fmt.Fprintf(&b, "  sf %s", strconv.FormatFloat(*r.ScaleFactor, 'g', -1, 64))
	}
	if r.Host.CPUModel != "" {
		fmt.Fprintf(&b, "  %s (%d cores)", r.Host.CPUModel, r.Host.Cores)
	}
	fmt.Fprintf(&b, "\nintervals: %s percentile bootstrap, %d resamples, seed %d; t_db tolerance %s or %s\n\n",
		textLevel(s.Options.CILevel), s.Options.Resamples, s.Options.Seed,
		textPercent(s.Options.ToleranceRel)[1:], textNanos(s.Options.FloorNS))

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "query\tpath\tphase\tconc\tn\ttimeouts\terrors\tp50\t%s CI\tp95\tp99\trps\tvs native p50\tt_db p50\tnote\n", textLevel(s.Options.CILevel))
	overhead := map[GroupKey]*Overhead{}
	tdb := map[string]*TDB{}
	for _, rec := range s.Records {
		switch v := rec.(type) {
		case *Overhead:
			overhead[GroupKey{v.Path, v.Query, v.Phase, v.Concurrency}] = v
		case *TDB:
			tdb[v.Query] = v
		}
	}
	var notes []string // numbered from 1; a repeated warning keeps its number
	noteNum := map[string]int{}
	for _, st := range s.Stats() {
		k := GroupKey{st.Path, st.Query, st.Phase, st.Concurrency}
		p50, ci, p95, p99 := "-", "-", "-", "-"
		if st.N > 0 {
			p50 = textNanos(st.P50NS)
			ci = "[" + textNanos(st.P50CINS[0]) + ", " + textNanos(st.P50CINS[1]) + "]"
			p95, p99 = textNanos(st.P95NS), textNanos(st.P99NS)
		}
		rps := "-"
		if st.ThroughputRPS != nil {
			rps = strconv.FormatFloat(*st.ThroughputRPS, 'f', 0, 64)
		}
		vs := "-"
		if ov := overhead[k]; ov != nil {
			vs = fmt.Sprintf("%s [%s, %s] %s", textSignedNanos(ov.DeltaP50NS),
				textSignedNanos(ov.DeltaP50CINS[0]), textSignedNanos(ov.DeltaP50CINS[1]), textPercent(ov.RelP50))
			if ov.OwnP50NS != nil && ov.OwnRelP50 != nil {
				vs += fmt.Sprintf("; own %s (%+.3f%%)", textNanos(*ov.OwnP50NS), *ov.OwnRelP50*100)
			}
			if p := pairedText(ov); p != "" {
				vs += "; paired " + p
			}
			if ov.ThroughputRatio != nil {
				vs += fmt.Sprintf(", rps x%.2f", *ov.ThroughputRatio)
			}
		}
		td := "-"
		if v := tdb[st.Query]; v != nil && st.Path == PathServer && st.Phase == PhaseWarm && st.Concurrency == 1 {
			verdict := "matches native"
			if !v.TDBMatchesNative {
				verdict = "DIFFERS from native"
			}
			td = textNanos(v.ServerTDBP50NS) + " " + verdict
		}
		note := ""
		if len(st.Warnings) > 0 {
			var refs []string
			for _, wmsg := range st.Warnings {
				num, ok := noteNum[wmsg]
				if !ok {
					notes = append(notes, wmsg)
					num = len(notes)
					noteNum[wmsg] = num
				}
				refs = append(refs, strconv.Itoa(num))
			}
			note = "[" + strings.Join(refs, ",") + "]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			st.Query, st.Path, st.Phase, st.Concurrency, st.N, st.Timeouts, st.Errors, p50, ci, p95, p99, rps, vs, td, note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(notes) > 0 {
		b.WriteString("\nnotes:\n")
		for i, n := range notes {
			fmt.Fprintf(&b, "  [%d] %s\n", i+1, n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteText writes the comparison as a table in the manner of benchstat:
// the change is "~" when it is not significant at alpha.
func (c *Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "old %s  new %s  two-sided Mann-Whitney U, alpha %s\n\n",
		c.OldRunID, c.NewRunID, strconv.FormatFloat(c.Alpha, 'g', -1, 64))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "query\tpath\tphase\tconc\told p50\tnew p50\tchange\tp\tn")
	for i, r := range c.Records {
		change := "~"
		if r.Significant {
			change = textPercent(r.ChangeRel)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%.3f\t%d+%d\n", r.Query, r.Path, r.Phase, r.Concurrency,
			textNanos(r.OldP50NS), textNanos(r.NewP50NS), change, r.PValue, c.OldN[i], c.NewN[i])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(c.Warnings) > 0 {
		b.WriteString("\nnotes:\n")
		for _, n := range c.Warnings {
			fmt.Fprintf(&b, "  %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
