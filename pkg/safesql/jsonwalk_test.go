// Cross-check: the JSON walk and the protobuf walk agree on the corpus.

package safesql

import (
	"github.com/qpkit/qpkit/pkg/tpch"
	"testing"
)

// TestJSONWalkAgrees checks that the JSON walk (checkJSON) and the
// protobuf walk (checkProto) give the same kind and the same refusal,
// including Reason, Construct and Position, for every corpus statement,
// the TPC-H queries and the position cases.
func TestJSONWalkAgrees(t *testing.T) {
	var texts []string
	for _, e := range readCorpus(t) {
		texts = append(texts, e.SQL)
	}
	for i := 1; i <= 22; i++ {
		q, err := tpch.Query(i)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(q))
	}
	texts = append(texts,
		"SELECT pg_sleep(1)", "SELECT 1, pg_catalog.pg_sleep(1)", "SELECT U&\"pg\\005fsleep\"(1)",
		"WITH x AS (DELETE FROM t RETURNING 1) SELECT 1", "EXPLAIN ANALYZE SELECT 1",
		"SELECT é, pg_sleep(1)", "EXPLAIN (analyze 'off') SELECT 1", "EXPLAIN (analyze 0) SELECT 1",
		"EXPLAIN (analyze 1) SELECT 1", "EXPLAIN (foo, analyze) SELECT pg_sleep(1)",
		"SELECT 'a\"b\\\\c\n', \"x\"\"y\" FROM t", "SELECT x::s.t", "SELECT x OPERATOR(s.+) y",
		"SELECT * FROM t TABLESAMPLE foo(1)", "SELECT f(pg_sleep(1))", "SELECT pg_sleep(f(1))")
	for _, opts := range []Options{{AllowFunctions: []string{"myfn"}}, {AllowExplainAnalyze: true, MaxDepth: 8}} {
		v, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, sql := range texts {
			k1, r1 := v.checkProto(sql)
			k2, r2 := v.checkJSON(sql)
			if k1 != k2 || (r1 == nil) != (r2 == nil) || r1 != nil && *r1 != *r2 {
				t.Errorf("%.100q:\nproto %q %+v\njson  %q %+v", sql, k1, r1, k2, r2)
			}
		}
	}
}
