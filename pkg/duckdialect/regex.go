// POSIX regular-expression operators.

package duckdialect

import (
	"strings"

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

// regexpReplace maps regexp_replace(s, pattern, replacement [, flags]):
// both engines replace the first match unless flag g is given and read
// \1..\9 in the replacement; PostgreSQL's \& (the whole match) and flags
// other than g and i are refused. Flag s keeps '.' matching a newline.
func regexpReplace(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	if len(fc.Args) != 3 && len(fc.Args) != 4 {
		return nil, unsupported("regexp_replace with %d arguments", len(fc.Args))
	}
	repl, ok := constString(fc.Args[2])
	if !ok || strings.Contains(repl, `\&`) {
		return nil, unsupported("regexp_replace with a replacement that is not a literal without \\&")
	}
	flags := "s"
	if len(fc.Args) == 4 {
		f, ok := constString(fc.Args[3])
		if !ok || strings.Trim(f, "gi") != "" {
			return nil, unsupported("regexp_replace flags other than g and i")
		}
		flags += f
	}
	return call("regexp_replace", fc.Args[0], fc.Args[1], fc.Args[2], strConst(flags)), nil
}
