// The 22 TPC-H queries in PostgreSQL dialect with the validation parameters.

package tpch

import (
	"embed"
	"fmt"
	"strings"
)

// NumQueries is the number of TPC-H queries.
const NumQueries = 22

// queryFiles holds qgen's output for the specification's validation
// parameters ("qgen -d"), made runnable in PostgreSQL. Q15's view is
// written as a WITH query so that every query is one read-only statement.
//
//go:embed queries/q*.sql
var queryFiles embed.FS

// Query returns query n (1..22) as one statement ending in ';', without
// qgen's leading comment lines.
func Query(n int) (string, error) {
	if n < 1 || n > NumQueries {
		return "", fmt.Errorf("query %d is out of range 1..%d", n, NumQueries)
	}
	b, err := queryFiles.ReadFile(fmt.Sprintf("queries/q%d.sql", n))
	if err != nil {
		return "", fmt.Errorf("query %d: %w", n, err)
	}
	lines := strings.Split(string(b), "\n")
	i := 0
	for i < len(lines) && (strings.HasPrefix(lines[i], "--") || strings.TrimSpace(lines[i]) == "") {
		i++
	}
	q := strings.TrimRight(strings.Join(lines[i:], "\n"), " \t\n")
	if !strings.HasSuffix(q, ";") {
		return "", fmt.Errorf("query %d does not end with ';'", n)
	}
	return q, nil
}
