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
	if err := checkPattern(e.Rexpr, flags, false); err != nil {
		return nil, err
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
	if !ok || strings.Contains(repl, `\&`) || strings.Contains(repl, `\0`) {
		return nil, unsupported("regexp_replace with a replacement that is not a literal without \\& or \\0")
	}
	flags := "s"
	if len(fc.Args) == 4 {
		f, ok := constString(fc.Args[3])
		if !ok || strings.Trim(f, "gi") != "" {
			return nil, unsupported("regexp_replace flags other than g and i")
		}
		flags += f
	}
	if err := checkPattern(fc.Args[1], flags, true); err != nil {
		return nil, err
	}
	return call("regexp_replace", fc.Args[0], fc.Args[1], fc.Args[2], strConst(flags)), nil
}

// checkPattern refuses a pattern whose meaning differs between
// PostgreSQL's regular expressions (ARE) and RE2: one that is not a
// literal (it could be any of these); \b and \B (a backspace and a
// backslash in an ARE, word boundaries in RE2); embedded options such as
// (?m) (other meanings); with case folding (flag i), a non-ASCII pattern
// (PostgreSQL's C ctype folds ASCII only, RE2 all of Unicode); and, where
// what matched is used (replace), alternation, since an ARE takes the
// longest alternative and RE2 the first that matches.
func checkPattern(n *pg_query.Node, flags string, replace bool) error {
	p, ok := constString(n)
	if !ok {
		return unsupported("a regular expression that is not a literal")
	}
	for i := 0; i+1 < len(p); i++ {
		switch {
		case p[i] == '\\':
			if c := p[i+1]; c == 'b' || c == 'B' {
				return unsupported("\\%c in a regular expression", c)
			}
			i++
		case p[i] == '(' && p[i+1] == '?' && i+2 < len(p) && (p[i+2] >= 'a' && p[i+2] <= 'z' || p[i+2] >= 'A' && p[i+2] <= 'Z'):
			return unsupported("embedded options (?%c...) in a regular expression", p[i+2])
		}
	}
	if strings.Contains(flags, "i") {
		for i := 0; i < len(p); i++ {
			if p[i] >= 0x80 {
				return unsupported("case-insensitive matching of a non-ASCII pattern")
			}
		}
	}
	if replace && strings.Contains(p, "|") {
		return unsupported("alternation (|) in a regular expression whose match is replaced")
	}
	return nil
}
