// Package run is perfrun's engine: the query set, the paths a query can
// take (native pgx, the executor in-process, and run_select through real
// MCP client sessions), and the loops that time them. It lives apart from
// package perf so that perfstat and perfhtml build without cgo.
package run

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/qpkit/qpkit/pkg/tpch"
)

// Query is one entry of the query set.
type Query struct {
	ID     string `json:"id"`
	Weight string `json:"weight"` // ultralight, light, heavy
	Size   string `json:"size"`   // 1, ~100, 100000: the result's rows
	SQL    string `json:"sql"`
}

// Weights and sizes of the taxonomy, in display order.
var (
	Weights = []string{"ultralight", "light", "heavy"}
	Sizes   = []string{"1", "~100", "100000"}
)

// PointLookup is the query the concurrency sweep runs.
const PointLookup = "pk_lookup"

// DefaultQueries is the built-in set over a TPC-H database: both axes of
// the taxonomy, with TPC-H Q1, Q3, Q5 and Q6 as the heavy ones.
func DefaultQueries() []Query {
	qs := []Query{
		{"select1", "ultralight", "1", "SELECT 1"},
		{PointLookup, "ultralight", "1", "SELECT * FROM orders WHERE o_orderkey = 4"},
		{"status_counts", "light", "1", "SELECT o_orderstatus, count(*) FROM orders GROUP BY o_orderstatus ORDER BY 1"},
		{"orders_100", "light", "~100", "SELECT * FROM orders WHERE o_orderkey < 400 ORDER BY o_orderkey"},
		{"lineitem_100k", "light", "100000", "SELECT * FROM lineitem LIMIT 100000"},
	}
	for _, n := range []int{1, 3, 5, 6} {
		sql, err := tpch.Query(n)
		if err != nil {
			panic(err) // embedded at build time
		}
		qs = append(qs, Query{fmt.Sprintf("q%d", n), "heavy", "1", strings.TrimSuffix(sql, ";")})
	}
	return qs
}

// ReadQueries reads a query-set file: one JSON object per line with id,
// weight, size and sql; blank lines and lines starting with # are skipped.
func ReadQueries(r io.Reader, name string) ([]Query, error) {
	var qs []Query
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		var q Query
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&q); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if dec.More() || dec.InputOffset() != int64(len(text)) {
			return nil, fmt.Errorf("%s:%d: more after the query's JSON object (one object per line)", name, line)
		}
		switch {
		case q.ID == "" || q.SQL == "":
			return nil, fmt.Errorf("%s:%d: id and sql are required", name, line)
		case seen[q.ID]:
			return nil, fmt.Errorf("%s:%d: duplicate id %q", name, line, q.ID)
		}
		seen[q.ID] = true
		qs = append(qs, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("%s: no queries", name)
	}
	return qs, nil
}
