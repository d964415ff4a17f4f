// POSIX regular-expression operators.

package duckdialect

import (
	"strconv"
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
	pattern, err := checkPattern(e.Rexpr, flags, false)
	if err != nil {
		return nil, err
	}
	m := call("regexp_matches", e.Lexpr, pattern, strConst(flags))
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
	pattern, err := checkPattern(fc.Args[1], flags, true)
	if err != nil {
		return nil, err
	}
	return call("regexp_replace", fc.Args[0], pattern, fc.Args[2], strConst(flags)), nil
}

// checkPattern returns the pattern RE2 reads as PostgreSQL's regular
// expressions (ARE) read it, or refuses it. Refused: a pattern that is
// not a literal (it could be any of these); \b and \B (a backspace and a
// backslash in an ARE, word boundaries in RE2); embedded options such as
// (?m) (other meanings); \S in a bracket expression. With case folding
// (flag i), PostgreSQL's C ctype folds ASCII only and RE2 all of Unicode,
// including k to U+212A (Kelvin sign) and s to U+017F (long s): refused
// are non-ASCII patterns and those that can match k or s (the letters,
// bracket expressions, \w, \W and character-code escapes). Where what
// matched is used (replace): alternation, since an ARE takes the longest
// alternative and RE2 the first that matches; non-greedy quantifiers,
// since an ARE's first quantifier sets the whole match's greediness; and
// more than one variable quantifier, since an ARE takes the longest match
// where RE2's greedy quantifiers take the first (a?(ab)? on "ab": "ab"
// and "a"); with one, the two agree.
// Rewritten: \s and \S, which in an ARE include the vertical tab, to
// [[:space:]] and [^[:space:]].
func checkPattern(n *pg_query.Node, flags string, replace bool) (*pg_query.Node, error) {
	p, ok := constString(n)
	if !ok {
		return nil, unsupported("a regular expression that is not a literal")
	}
	fold := strings.Contains(flags, "i")
	foldErr := func(what string) error {
		return unsupported("case-insensitive matching of a regular expression with %s (RE2 also folds U+212A and U+017F to k and s)", what)
	}
	var out strings.Builder
	bracket, quantified := false, false
	variable := 0         // variable quantifiers seen (replace)
	open, brace := -1, -1 // the last unescaped "(" and "{" outside brackets
	for i := 0; i < len(p); i++ {
		c := p[i]
		after := quantified
		quantified = false
		inBracket := bracket
		switch {
		case c == '\\' && i+1 < len(p):
			e := p[i+1]
			i++
			switch {
			case e == 'b' || e == 'B':
				return nil, unsupported("\\%c in a regular expression", e)
			case e == 's' && bracket:
				out.WriteString("[:space:]")
			case e == 's':
				out.WriteString("[[:space:]]")
			case e == 'S' && bracket:
				return nil, unsupported("\\S in a bracket expression of a regular expression")
			case e == 'S':
				out.WriteString("[^[:space:]]")
			case fold && (strings.IndexByte("wWxuUe", e) >= 0 || e >= '0' && e <= '9'):
				return nil, foldErr(`\` + string(e))
			default:
				out.WriteByte(c)
				out.WriteByte(e)
			}
			continue
		case c == '(' && i+2 < len(p) && p[i+1] == '?' && (p[i+2] >= 'a' && p[i+2] <= 'z' || p[i+2] >= 'A' && p[i+2] <= 'Z'):
			return nil, unsupported("embedded options (?%c...) in a regular expression", p[i+2])
		case bracket && c == '[' && i+1 < len(p) && strings.IndexByte(":.=", p[i+1]) >= 0:
			// [:alpha:], [.x.], [=x=] run to their own closing "]"
			if end := strings.Index(p[i+2:], string(p[i+1])+"]"); end >= 0 {
				out.WriteString(p[i : i+end+4])
				i += end + 3
				continue
			}
		case bracket:
			bracket = c != ']'
		case c == '[':
			if fold {
				return nil, foldErr("a bracket expression")
			}
			bracket = true
			out.WriteByte(c)
			if i+1 < len(p) && p[i+1] == '^' { // a leading "]" is a member
				i++
				out.WriteByte('^')
			}
			if i+1 < len(p) && p[i+1] == ']' {
				i++
				out.WriteByte(']')
			}
			continue
		case fold && strings.IndexByte("kKsS", c) >= 0:
			return nil, foldErr("the letter " + string(c))
		case replace && c == '|':
			return nil, unsupported("alternation (|) in a regular expression whose match is replaced")
		case replace && c == '?' && after:
			return nil, unsupported("non-greedy quantifiers in a regular expression whose match is replaced")
		case c == '{' && i+1 < len(p) && p[i+1] >= '0' && p[i+1] <= '9':
			// In an ARE "{digit" always opens a bound.
			j := strings.IndexByte(p[i:], '}')
			if j < 0 {
				return nil, unsupported("a bound without its closing } in a regular expression (PostgreSQL: braces {} not balanced)")
			}
			if !isBound(p, i+j, i) {
				return nil, unsupported("a malformed bound {%s} in a regular expression (PostgreSQL: invalid repetition count(s))", p[i+1:i+j])
			}
		case c == '}' && !isBound(p, i, brace):
			// an ordinary character
		case c == '*' || c == '+' || c == '?' || c == '}':
			if c == '}' && !boundInRange(p[brace+1:i]) {
				return nil, unsupported("a repetition count above 255, or {m,n} with m > n, in a regular expression (PostgreSQL: invalid repetition count(s))")
			}
			quantified = true
			v := variableQuantifier(p, i, open, brace)
			if replace && i+1 < len(p) && p[i+1] == '?' && v {
				return nil, unsupported("non-greedy quantifiers in a regular expression whose match is replaced")
			}
			if replace && v {
				if variable++; variable > 1 {
					return nil, unsupported("more than one variable quantifier (*, +, ?, {n,m}) in a regular expression whose match is replaced (PostgreSQL takes the longest match, RE2 the first)")
				}
			}
		}
		if !inBracket {
			switch c {
			case '(':
				open = i
			case '{':
				brace = i
			}
		}
		out.WriteByte(c)
	}
	if fold {
		for i := 0; i < len(p); i++ {
			if p[i] >= 0x80 {
				return nil, unsupported("case-insensitive matching of a non-ASCII pattern")
			}
		}
	}
	if out.String() == p {
		return n, nil
	}
	return strConst(out.String()), nil
}

// variableQuantifier: the quantifier at p[i] (*, +, ?, or the "}" of a
// bound, isBound) can repeat its atom a varying number of times. Not: the
// "?" of a "(?" group (open is the last unescaped "("), and a bound {n}.
func variableQuantifier(p string, i, open, brace int) bool {
	switch p[i] {
	case '?':
		return open != i-1
	case '}':
		lo, hi, comma := strings.Cut(p[brace+1:i], ",")
		return comma && hi != lo
	}
	return true
}

// isBound: the "}" at p[i] closes a bound {n}, {n,} or {n,m} (brace is
// the last unescaped "{"); an ARE reads "{" not followed by a digit, and
// a lone "}", as ordinary characters.
func isBound(p string, i, brace int) bool {
	if brace < 0 {
		return false
	}
	lo, hi, comma := strings.Cut(p[brace+1:i], ",")
	return digits(lo) && (!comma || hi == "" || digits(hi))
}

// boundInRange: a bound's counts are at most 255 (PostgreSQL's DUPMAX;
// RE2 takes up to 1000) and not decreasing.
func boundInRange(body string) bool {
	lo, hi, _ := strings.Cut(body, ",")
	l, err := strconv.Atoi(lo)
	if err != nil || l > 255 {
		return false
	}
	if hi == "" {
		return true
	}
	h, err := strconv.Atoi(hi)
	return err == nil && h <= 255 && l <= h
}

// digits: s is one or more ASCII digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
