// EXPLAIN: DuckDB's plan reshaped into PostgreSQL's one "QUERY PLAN" column, one row per line.

package duckwire

import (
	"database/sql/driver"
	"fmt"
	"io"
	"strings"
)

var explainColumns = []column{{name: "QUERY PLAN", typ: tText}}

// explainRows reads DuckDB's EXPLAIN result (key and plan text columns)
// and returns its plan lines as PostgreSQL shows a plan.
func explainRows(rs resultSet) resultSet {
	defer rs.close()
	out := &localRows{cols: explainColumns}
	dst := make([]driver.Value, len(rs.columns()))
	for {
		if err := rs.next(dst); err != nil {
			if err != io.EOF {
				out.rows = append(out.rows, []driver.Value{"error reading the plan: " + err.Error()})
			}
			return out
		}
		if len(dst) == 0 {
			continue
		}
		text := fmt.Sprint(dst[len(dst)-1])
		for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			out.rows = append(out.rows, []driver.Value{line})
		}
	}
}
