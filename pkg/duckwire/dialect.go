// The dialect hook: PostgreSQL SQL to DuckDB SQL, pkg/duckdialect by default.

package duckwire

import "github.com/qpkit/qpkit/pkg/duckdialect"

// Dialect turns the PostgreSQL SQL clients send into SQL DuckDB runs.
type Dialect struct {
	// Translate rewrites one statement. An error whose SQLState method
	// returns a code (duckdialect's UnsupportedError says 0A000, its
	// SyntaxError 42601) is reported with that code; any other error with
	// 0A000, since the statement could not be translated faithfully. Nil:
	// passthrough.
	Translate func(sql string) (string, error)
	// SessionSQL runs on every new DuckDB connection, before the session's
	// TimeZone is applied.
	SessionSQL []string
}

// DefaultDialect is pkg/duckdialect's translation and session settings.
var DefaultDialect = &Dialect{Translate: duckdialect.Translate, SessionSQL: duckdialect.SessionSQL()}

// Passthrough sends SQL to DuckDB unchanged (DuckDB's own semantics).
var Passthrough = &Dialect{}

func (d *Dialect) translate(sql string) (string, error) {
	if d.Translate == nil {
		return sql, nil
	}
	return d.Translate(sql)
}
