// Comparison of two samples files: compare records (perfstat --compare).

package perf

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/qpkit/qpkit/pkg/stats"
)

// Comparison is the compare records of two runs, in group order.
type Comparison struct {
	OldRunID, NewRunID string
	Alpha              float64
	Records            []*Compare
	// OldN and NewN are the ok samples behind Records[i] on each side.
	OldN, NewN []int
	// Warnings name groups only one side has, or with no ok samples.
	Warnings []string
}

// CheckAlpha reports whether alpha is a usable significance level.
func CheckAlpha(alpha float64) error {
	if !(alpha >= 0 && alpha <= 1) {
		return fmt.Errorf("alpha %v must be between 0 and 1", alpha)
	}
	return nil
}

// CompareRuns compares the groups present in both old and new (two samples
// files with run records) by their ok samples' dur_ns: the medians, their
// relative change new/old - 1, and the two-sided Mann-Whitney U p-value. A
// change is significant when p < alpha. Groups are ordered by the new run's
// query and path lists (see Summarize).
func CompareRuns(old, new *Records, alpha float64) (*Comparison, error) {
	if err := CheckAlpha(alpha); err != nil {
		return nil, err
	}
	if old.Run == nil || new.Run == nil {
		return nil, errors.New("no run record")
	}
	c := &Comparison{OldRunID: old.Run.RunID, NewRunID: new.Run.RunID, Alpha: alpha}
	ord := newGroupOrdering(new.Run)
	og := groupSamples(old.Samples, ord)
	ng := groupSamples(new.Samples, ord)
	oldBy := map[GroupKey]*sampleGroup{}
	for _, g := range og {
		oldBy[g.key] = g
	}
	newKeys := map[GroupKey]bool{}
	for _, n := range ng {
		newKeys[n.key] = true
		o := oldBy[n.key]
		switch {
		case o == nil:
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s: only in the new run", n.key))
			continue
		case len(o.ok) == 0:
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s: no ok samples in the old run", n.key))
			continue
		case len(n.ok) == 0:
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s: no ok samples in the new run", n.key))
			continue
		}
		op, np := stats.Median(o.ok), stats.Median(n.ok)
		_, p := stats.MannWhitney(o.ok, n.ok)
		if math.IsNaN(p) {
			p = 1
		}
		rec := &Compare{
			Path: n.key.Path, Query: n.key.Query, Phase: n.key.Phase, Concurrency: n.key.Concurrency,
			OldRunID: c.OldRunID, NewRunID: c.NewRunID,
			OldP50NS: roundNS(op), NewP50NS: roundNS(np),
			PValue: p, Alpha: alpha, Significant: p < alpha,
		}
		if op > 0 {
			rec.ChangeRel = np/op - 1
		}
		c.Records = append(c.Records, rec)
		c.OldN = append(c.OldN, len(o.ok))
		c.NewN = append(c.NewN, len(n.ok))
	}
	for _, o := range og {
		if !newKeys[o.key] {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s: only in the old run", o.key))
		}
	}
	return c, nil
}

// WriteJSON writes the compare records, one per line.
func (c *Comparison) WriteJSON(w io.Writer) error {
	jw := NewWriter(w, "")
	for _, r := range c.Records {
		if err := jw.Write(r); err != nil {
			return err
		}
	}
	return nil
}
