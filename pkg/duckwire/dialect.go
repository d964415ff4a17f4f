// The dialect hook: PostgreSQL SQL to DuckDB SQL, pluggable until and beside pkg/duckdialect.

package duckwire

// Dialect turns the PostgreSQL SQL clients send into SQL DuckDB runs.
type Dialect struct {
	// Translate rewrites one statement. An error whose SQLState method
	// returns a code (pkg/duckdialect's UnsupportedError says 0A000) is
	// reported with that code; any other error with 0A000 too, since the
	// statement could not be translated faithfully. Nil: passthrough.
	Translate func(sql string) (string, error)
	// SessionSQL runs on every new DuckDB connection.
	SessionSQL []string
}

// DefaultDialect is the passthrough: DuckDB already accepts most
// PostgreSQL SELECT syntax.
var DefaultDialect = &Dialect{}

func (d *Dialect) translate(sql string) (string, error) {
	if d.Translate == nil {
		return sql, nil
	}
	return d.Translate(sql)
}
