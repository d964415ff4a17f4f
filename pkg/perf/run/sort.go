package run

import (
	"cmp"
	"slices"

	"github.com/qpkit/qpkit/pkg/perf"
)

func sortSamples(s []*perf.Sample) {
	slices.SortFunc(s, func(a, b *perf.Sample) int {
		return cmp.Or(cmp.Compare(a.Client, b.Client), cmp.Compare(a.Iter, b.Iter))
	})
}
