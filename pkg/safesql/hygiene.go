// Input hygiene: cheap checks that run before the SQL text reaches the C parser.

package safesql

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxChain bounds the operators and chain-forming keywords in one
// statement. Operator chains such as 1+1+1+... or UNION chains nest the
// parse tree without any brackets, and libpg_query's C code recurses once
// per level: about 23,500 levels overflow an 8 MiB thread stack and kill
// the process (measured with pg_query_go v6.2.5). 2048 leaves a wide
// margin even for 1 MiB stacks while no hand-written query comes close.
const maxChain = 2048

// chainKeywords are the keywords whose grammar rules nest the tree
// without brackets (left- or right-recursive productions). AND and OR are
// absent: the parser flattens them into one BoolExpr list.
var chainKeywords = map[string]bool{
	"case": true, "union": true, "intersect": true, "except": true,
	"join": true, "collate": true, "at": true, "is": true, "isnull": true,
	"notnull": true, "like": true, "ilike": true, "similar": true,
	"between": true, "not": true, "overlaps": true, "in": true,
	"operator": true,
}

// checkHygiene refuses text that must never reach the parser: too long,
// containing NUL (libpg_query reads a C string and would stop there, so
// the parser and the server would see different statements), invalid
// UTF-8, or nested deeper than the limits. It lexes just enough of SQL
// (comments, string and identifier quoting, dollar quotes) to count
// brackets and operators outside literals.
func checkHygiene(sql string, maxLen, maxDepth int) *Refusal {
	if len(sql) > maxLen {
		return refuse(maxLen, "length", "statement is "+strconv.Itoa(len(sql))+
			" bytes, longer than the limit of "+strconv.Itoa(maxLen)+" bytes")
	}
	if i := strings.IndexByte(sql, 0); i >= 0 {
		return refuse(i, "nul byte", "statement contains a NUL byte")
	}
	if !utf8.ValidString(sql) {
		i := 0
		for i < len(sql) {
			r, n := utf8.DecodeRuneInString(sql[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return refuse(i, "encoding", "statement is not valid UTF-8")
	}
	return CheckNesting(sql, maxDepth, maxChain)
}

// CheckNesting refuses text whose brackets nest deeper than maxDepth or
// that has more than maxChain operators and chain-forming keywords outside
// literals and comments: libpg_query's C code recurses once per level of
// the tree they make, and a deep enough tree overflows the thread's stack
// and kills the whole process, where no recover can help. Other servers
// that hand client text to pg_query (qpanalytics) call it first.
func CheckNesting(sql string, maxDepth, maxChain int) *Refusal {
	return nesting(sql, maxDepth, maxChain, false)
}

// CheckParseDepth is CheckNesting counting operators per expression: a
// comma ends a list element, whose operators add no depth to the next
// one, and a bracket's deepest element counts towards the expression it
// stands in. Flat lists of casts or negative numbers (an IN list of
// '...'::date, a VALUES list) pass however long, while a chain of
// operators, in brackets or not, is counted whole; chain-forming keywords
// (UNION, JOIN, CASE, ...) still count for the whole statement. For
// servers whose clients send generated analytical SQL.
func CheckParseDepth(sql string, maxDepth, maxChain int) *Refusal {
	return nesting(sql, maxDepth, maxChain, true)
}

// level is one bracket level's operator count in perExpression mode: in
// the current list element, and the most of any element so far.
type level struct{ cur, peak int }

func nesting(sql string, maxDepth, maxChain int, perExpression bool) *Refusal {
	depth, chain := 0, 0
	// perExpression: the operators along the current path (the current
	// element's at each open level), and the levels.
	path, keywords := 0, 0
	var levels []level
	if perExpression {
		levels = append(levels, level{})
	}
	n := len(sql)
	for i := 0; i < n; {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < n && sql[i+1] == '-':
			i = skipLineComment(sql, i)
		case c == '/' && i+1 < n && sql[i+1] == '*':
			i = skipBlockComment(sql, i)
		case c == '\'':
			i = skipQuoted(sql, i, '\'', false)
		case c == '"':
			i = skipQuoted(sql, i, '"', false)
		case c == '(' || c == '[':
			depth++
			if depth > maxDepth {
				return refuse(i, "nesting depth", "brackets nest deeper than the limit of "+
					strconv.Itoa(maxDepth)+" levels")
			}
			if perExpression {
				levels = append(levels, level{})
			}
			i++
		case c == ')' || c == ']':
			depth--
			if perExpression && len(levels) > 1 {
				in := levels[len(levels)-1]
				levels = levels[:len(levels)-1]
				out := &levels[len(levels)-1]
				path += in.peak - in.cur
				out.cur += in.peak
				out.peak = max(out.peak, out.cur)
			}
			i++
		case c == ',' && perExpression:
			l := &levels[len(levels)-1]
			path -= l.cur
			l.cur = 0
			i++
		case c == '$':
			i = skipDollar(sql, i)
		case c >= '0' && c <= '9':
			for i < n && isIdentByte(sql[i]) {
				i++
			}
		case isIdentStart(c):
			start := i
			for i < n && (isIdentByte(sql[i]) || sql[i] == '$') {
				i++
			}
			word := sql[start:i]
			if i < n && len(word) == 1 {
				switch {
				case sql[i] == '\'' && (word[0] == 'e' || word[0] == 'E'):
					i = skipQuoted(sql, i, '\'', true)
					continue
				case sql[i] == '\'' && strings.ContainsRune("bBxXnN", rune(word[0])):
					i = skipQuoted(sql, i, '\'', false)
					continue
				case sql[i] == '&' && (word[0] == 'u' || word[0] == 'U') && i+1 < n &&
					(sql[i+1] == '\'' || sql[i+1] == '"'):
					i = skipQuoted(sql, i+1, sql[i+1], false)
					continue
				}
			}
			if len(word) >= 2 && len(word) <= 9 && chainKeywords[strings.ToLower(word)] {
				chain++
				keywords++
			}
		case isOpByte(c):
			for i < n && isOpByte(sql[i]) {
				if i+1 < n && ((sql[i] == '-' && sql[i+1] == '-') || (sql[i] == '/' && sql[i+1] == '*')) {
					break
				}
				i++
			}
			chain++
			if perExpression {
				l := &levels[len(levels)-1]
				l.cur++
				l.peak = max(l.peak, l.cur)
				path++
			}
		default:
			i++
		}
		if perExpression {
			chain = path + keywords
		}
		if chain > maxChain {
			return refuse(i-1, "nesting depth", "statement has more than "+strconv.Itoa(maxChain)+
				" operators and chaining keywords; split the expression")
		}
	}
	return nil
}

func isIdentStart(c byte) bool {
	return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80
}

func isIdentByte(c byte) bool {
	return isIdentStart(c) || (c >= '0' && c <= '9')
}

func isOpByte(c byte) bool {
	return strings.IndexByte("+-*/<>=~!@#%^&|`?:", c) >= 0
}

// skipLineComment skips a -- comment: PostgreSQL's lexer ends it at a
// newline or a carriage return, so what follows either is SQL to count.
func skipLineComment(s string, i int) int {
	if j := strings.IndexAny(s[i:], "\n\r"); j >= 0 {
		return i + j + 1
	}
	return len(s)
}

// skipBlockComment skips a comment that starts at s[i:]; PostgreSQL's
// block comments nest.
func skipBlockComment(s string, i int) int {
	depth := 0
	for i+1 < len(s) {
		switch {
		case s[i] == '/' && s[i+1] == '*':
			depth++
			i += 2
		case s[i] == '*' && s[i+1] == '/':
			depth--
			i += 2
			if depth == 0 {
				return i
			}
		default:
			i++
		}
	}
	return len(s)
}

// skipQuoted skips a literal or quoted identifier opening at s[i] with
// quote q; a doubled quote is one quote character, and in an E'...' string a
// backslash escapes the next byte.
func skipQuoted(s string, i int, q byte, backslash bool) int {
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if backslash {
				i++
			}
		case q:
			if i+1 < len(s) && s[i+1] == q {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(s)
}

// skipDollar skips a parameter ($1) or a dollar-quoted string ($tag$...$tag$)
// starting at s[i] == '$'.
func skipDollar(s string, i int) int {
	j := i + 1
	if j < len(s) && s[j] >= '0' && s[j] <= '9' {
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		return j
	}
	for j < len(s) && s[j] != '$' && isIdentByte(s[j]) {
		j++
	}
	if j >= len(s) || s[j] != '$' {
		return i + 1
	}
	tag := s[i : j+1]
	if k := strings.Index(s[j+1:], tag); k >= 0 {
		return j + 1 + k + len(tag)
	}
	return len(s)
}
