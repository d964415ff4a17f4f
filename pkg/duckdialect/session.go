// DuckDB settings that make a connection answer like PostgreSQL.

package duckdialect

// SessionSQL returns the statements to run on every DuckDB connection
// before translated queries, each verified against PostgreSQL by the tests:
//
//   - integer_division: PostgreSQL's int / int is an integer truncated
//     toward zero; DuckDB's "/" returns a double unless this is on.
//   - default_null_order: PostgreSQL sorts NULL as larger than any value,
//     so last ascending and first descending; DuckDB's default is NULLS LAST
//     both ways.
//   - TimeZone: UTC, the throwaway clusters' and most servers' zone; the
//     server should replace it with the client's TimeZone when that differs.
func SessionSQL() []string {
	return []string{
		"SET integer_division = true",
		"SET default_null_order = 'nulls_last_on_asc_first_on_desc'",
		"SET TimeZone = 'UTC'",
	}
}
