// POSIX regular-expression operators.

package duckdialect

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// regexOps are PostgreSQL's regular-expression match operators.
var regexOps = map[string]bool{"~": true, "~*": true, "!~": true, "!~*": true}

// regexMatch rewrites x ~ p into regexp_matches(x, p, flags). PostgreSQL's
// operators find a match anywhere in x, which is regexp_matches; DuckDB's
// own "~" must match all of x. Flag 's' lets '.' match a newline, as it
// does in PostgreSQL's default (not newline-sensitive) mode; 'i' is the
// case-insensitive form. Syntax beyond what RE2 reads (back references,
// lookaround) fails in DuckDB rather than answering differently.
func regexMatch(e *pg_query.A_Expr, name string) (*pg_query.Node, error) {
	flags := "s"
	if name == "~*" || name == "!~*" {
		flags = "is"
	}
	m := call("regexp_matches", e.Lexpr, e.Rexpr, strConst(flags))
	if name[0] == '!' {
		return not(m), nil
	}
	return m, nil
}
