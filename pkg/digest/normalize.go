// The query-shape normalizer: one pass of a byte scanner over PostgreSQL's lexical rules.

package digest

import (
	"strconv"
	"sync"
)

// Token kinds as the normalizer emits them. Only the kind of the previous
// token and a few flags decide spacing, unary minus and list collapsing, so
// the output scans back to the same decisions (Normalize is idempotent).
type kind uint8

const (
	kNone   kind = iota // nothing emitted yet
	kWord               // keyword or unquoted identifier, lower-cased
	kQuoted             // quoted identifier, verbatim
	kParam              // placeholder $n
	kInt                // integer kept as written (ORDER BY / GROUP BY position)
	kOp                 // operator, or a byte the scanner does not know
	kOpen               // ( or [
	kClose              // ) or ]
	kComma              // ,
	kSemi               // ;
	kDot                // .
	kCast               // ::
)

// Byte classes.
const (
	cOther  uint8 = iota
	cSpace        // whitespace
	cIdent        // may start an identifier: letters, _, bytes >= 0x80
	cDigit        // 0-9
	cOpChar       // + - * / < > = ~ ! @ # % ^ & | ` ?
)

var class = func() (t [256]uint8) {
	for _, c := range " \t\n\r\f\v" {
		t[c] = cSpace
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = cIdent, cIdent
	}
	t['_'] = cIdent
	for c := 0x80; c < 0x100; c++ {
		t[c] = cIdent
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = cDigit
	}
	for _, c := range "+-*/<>=~!@#%^&|`?" {
		t[c] = cOpChar
	}
	return t
}()

// identCont marks the bytes that may continue an identifier.
var identCont = func() (t [256]bool) {
	for c := range t {
		t[c] = class[c] == cIdent || class[c] == cDigit || c == '$'
	}
	return t
}()

// list is a candidate IN (...) or ARRAY[...] list, or VALUES row, of
// constants.
type list struct {
	active bool
	close  byte // ')' or ']'
	start  int  // index of the opening bracket in out
	n0     int  // number of the list's first placeholder
	depth  int  // bracket depth inside the list
	state  uint8
	arity  int // placeholders so far
}

// step advances the list with a token of kind k at the list's depth.
func (l *list) step(k kind) {
	switch {
	case k == kParam && l.state == lElem:
		l.state = lAfterElm
		l.arity++
	case k == kComma && (l.state == lAfterElm || l.state == lAfterTyp):
		l.state = lElem
	case k == kCast && (l.state == lAfterElm || l.state == lAfterTyp):
		l.state = lCastType
	case (k == kWord || k == kQuoted) && (l.state == lCastType || l.state == lAfterTyp):
		l.state = lAfterTyp
	default:
		l.active = false
	}
}

// complete reports whether the list may close here.
func (l *list) complete() bool {
	return l.active && (l.state == lAfterElm || l.state == lAfterTyp)
}

// valuesRows tracks the rows of a VALUES list: once a first row of constants is
// written, each following row of constants with as many columns is
// dropped, so "values (1, 2), (3, 4)" is "values ($1, $2)".
type valuesRows struct {
	on        bool
	depth     int  // bracket depth of the VALUES keyword
	expectRow bool // a '(' may start the next row; otherwise a ',' may come
	first     bool // the first row was all constants
	firstEnd  int  // len(out) after the first row
	arity     int  // its number of columns
	next      int  // the placeholder number after it
	row       list // the row being read
}

// List states: what the list accepts next.
const (
	lElem     uint8 = iota // a placeholder
	lAfterElm              // ',', '::' or the closing bracket
	lCastType              // a type name word after '::'
	lAfterTyp              // more type words, ',', '::' or the closing bracket
)

type normalizer struct {
	src   string
	out   []byte
	start int // where this statement's text begins in out
	next  int // number of the next placeholder
	depth int // bracket depth

	literals int // constants replaced by placeholders (not $n parameters)

	prev     kind
	prevWord int  // start in out of the previous token when it is a kWord
	prevIsBy bool // previous token is "by" after "order" or "group"
	byList   bool // inside an ORDER BY or GROUP BY list at byDepth
	byDepth  int
	// Brackets whose integer elements are output-column positions too:
	// DISTINCT ON (...) and ROLLUP, CUBE, GROUPING SETS (...) in a BY list
	// (posDepth, nested brackets included), and a bracket of its own in a
	// BY list, ORDER BY (2) (byParen).
	posDepth   int
	posInner   int // the deepest bracket of posDepth's grouping sets: plain brackets only, no function call's
	byParen    int
	distinctOn bool // the previous word is "on" after "distinct"
	lastNotSc  int  // len(out) after the last token that is not ';'
	lst        list
	vals       valuesRows
}

// Append appends the normalized text of sql to dst and returns the extended
// slice and the fingerprint of the appended text. With a dst of enough
// capacity it does not allocate.
func Append(dst []byte, sql string) ([]byte, uint64) {
	out, fp, _ := appendShape(dst, sql)
	return out, fp
}

// appendShape is Append that also reports whether sql has constants: a
// text without any (a parameterized statement) is likely to come again.
func appendShape(dst []byte, sql string) (out []byte, fp uint64, literals bool) {
	n := normalizer{src: sql, out: dst, start: len(dst), next: 1, lastNotSc: len(dst)}
	n.run()
	out = n.out[:n.lastNotSc]
	return out, Hash(out[n.start:]), n.literals > 0
}

// Normalize returns the normalized text of sql and its fingerprint, the
// FNV-1a hash of the text. It allocates only the returned string.
func Normalize(sql string) (string, uint64) {
	b := getBuf()
	out, fp := Append((*b)[:0], sql)
	text := string(out)
	putBuf(b, out)
	return text, fp
}

// Fingerprint returns the fingerprint Normalize would return, without
// allocating (its buffers are pooled).
func Fingerprint(sql string) uint64 {
	b := getBuf()
	out, fp := Append((*b)[:0], sql)
	putBuf(b, out)
	return fp
}

// Pooled buffers for the normalized text. Buffers grown beyond maxPooled
// are dropped rather than kept.
const maxPooled = 64 << 10

var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func getBuf() *[]byte { return bufs.Get().(*[]byte) }

func putBuf(b *[]byte, used []byte) {
	if cap(used) > maxPooled {
		return
	}
	*b = used[:0]
	bufs.Put(b)
}

// Hash is the 64-bit FNV-1a hash of a normalized text: the fingerprint.
func Hash(text []byte) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for _, c := range text {
		h ^= uint64(c)
		h *= prime
	}
	return h
}

func (n *normalizer) run() {
	s := n.src
	i := 0
	for i < len(s) {
		c := s[i]
		switch class[c] {
		case cSpace:
			i++
		case cIdent:
			i = n.identOrPrefixed(i)
		case cDigit:
			i = n.number(i)
		case cOpChar:
			if c == '-' && i+1 < len(s) && s[i+1] == '-' {
				i = skipLineComment(s, i)
				continue
			}
			if c == '/' && i+1 < len(s) && s[i+1] == '*' {
				i = skipBlockComment(s, i)
				continue
			}
			i = n.operator(i)
		default:
			i = n.punct(i)
		}
	}
}

// skipLineComment skips a -- comment, which ends at \n or \r as in
// PostgreSQL's lexer.
func skipLineComment(s string, i int) int {
	for i < len(s) && s[i] != '\n' && s[i] != '\r' {
		i++
	}
	return i
}

// skipBlockComment skips a /* */ comment; they nest, as in PostgreSQL.
func skipBlockComment(s string, i int) int {
	depth := 0
	for i < len(s) {
		if s[i] == '/' && i+1 < len(s) && s[i+1] == '*' {
			depth++
			i += 2
		} else if s[i] == '*' && i+1 < len(s) && s[i+1] == '/' {
			depth--
			i += 2
			if depth == 0 {
				return i
			}
		} else {
			i++
		}
	}
	return i
}

func (n *normalizer) identOrPrefixed(i int) int {
	s := n.src
	c := s[i] | 0x20
	if i+1 < len(s) {
		switch {
		case s[i+1] == '\'' && (c == 'e'):
			return n.stringLit(i+1, true)
		case s[i+1] == '\'' && (c == 'b' || c == 'x' || c == 'n'):
			return n.stringLit(i+1, false)
		case c == 'u' && s[i+1] == '&' && i+2 < len(s) && s[i+2] == '\'':
			return n.stringLit(i+2, false)
		case c == 'u' && s[i+1] == '&' && i+2 < len(s) && s[i+2] == '"':
			return n.quotedIdent(i, i+2)
		}
	}
	j := i + 1
	for j < len(s) && identCont[s[j]] {
		j++
	}
	n.word(s[i:j])
	return j
}

// stringLit scans a string literal whose opening quote is at q, then any
// continuation ('a'<newline>'b' is one literal), and emits one placeholder.
// A U&'...' literal's UESCAPE clause stays as words and a second placeholder.
func (n *normalizer) stringLit(q int, escapes bool) int {
	s := n.src
	i := q + 1
	for {
		for i < len(s) {
			if escapes && s[i] == '\\' {
				i += 2
				continue
			}
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					i += 2
					continue
				}
				break
			}
			i++
		}
		if i >= len(s) {
			i = len(s)
			break
		}
		i++ // closing quote
		// Continuation: whitespace with a newline, then a quote. As in
		// PostgreSQL's lexer (quotecontinue), -- comments may sit in that
		// whitespace (each runs to a newline); /* */ comments may not.
		j, newline := i, false
		for j < len(s) {
			if class[s[j]] == cSpace {
				newline = newline || s[j] == '\n' || s[j] == '\r'
				j++
			} else if s[j] == '-' && j+1 < len(s) && s[j+1] == '-' {
				j = skipLineComment(s, j)
			} else {
				break
			}
		}
		if !newline || j >= len(s) || s[j] != '\'' {
			break
		}
		i = j + 1
	}
	n.constant()
	return i
}

func (n *normalizer) quotedIdent(start, q int) int {
	s := n.src
	i := q + 1
	for i < len(s) {
		if s[i] == '"' {
			if i+1 < len(s) && s[i+1] == '"' {
				i += 2
				continue
			}
			i++
			n.emit(kQuoted)
			n.out = append(n.out, s[start:i]...)
			n.listToken(kQuoted)
			return i
		}
		i++
	}
	n.emit(kQuoted)
	n.out = append(n.out, s[start:]...)
	n.listToken(kQuoted)
	return len(s)
}

// number scans a numeric literal at i and emits it.
func (n *normalizer) number(i int) int {
	end, isInt := numberEnd(n.src, i)
	n.numberToken(i, end, isInt)
	return end
}

// numberEnd returns where the numeric literal at i ends and whether it is a
// plain integer: decimal with underscores, 0x/0o/0b integers, fractions,
// exponents.
func numberEnd(s string, i int) (int, bool) {
	if s[i] == '0' && i+1 < len(s) && (s[i+1]|0x20 == 'x' || s[i+1]|0x20 == 'o' || s[i+1]|0x20 == 'b') {
		i += 2
		for i < len(s) && (isHex(s[i]) || s[i] == '_') {
			i++
		}
		return i, false
	}
	isInt := true
	for i < len(s) && (class[s[i]] == cDigit || s[i] == '_') {
		i++
	}
	if i < len(s) && s[i] == '.' && !(i+1 < len(s) && s[i+1] == '.') {
		isInt = false
		i++
		for i < len(s) && (class[s[i]] == cDigit || s[i] == '_') {
			i++
		}
	}
	if i < len(s) && s[i]|0x20 == 'e' {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && class[s[j]] == cDigit {
			isInt = false
			i = j
			for i < len(s) && class[s[i]] == cDigit {
				i++
			}
		}
	}
	return i, isInt
}

func isHex(c byte) bool {
	return class[c] == cDigit || (c|0x20 >= 'a' && c|0x20 <= 'f')
}

func (n *normalizer) numberToken(start, end int, isInt bool) {
	if isInt && (n.byList && n.depth == n.byDepth && (n.prevIsBy || n.prev == kComma) || n.positionInBrackets(end)) {
		n.emit(kInt)
		n.out = append(n.out, n.src[start:end]...)
		n.listToken(kInt)
		return
	}
	n.constant()
}

// positionInBrackets tells whether an integer ending at end is an element
// on its own of a bracket whose elements are column positions.
func (n *normalizer) positionInBrackets(end int) bool {
	inPos := n.posDepth > 0 && n.depth == n.posInner && (n.prev == kOpen || n.prev == kComma)
	inParen := n.byParen > 0 && n.depth == n.byParen && n.prev == kOpen
	if !inPos && !inParen {
		return false
	}
	for end < len(n.src) && (n.src[end] == ' ' || n.src[end] == '\t' || n.src[end] == '\n' || n.src[end] == '\r') {
		end++
	}
	return end < len(n.src) && (n.src[end] == ')' || (inPos && n.src[end] == ','))
}

// operator scans a run of operator characters with PostgreSQL's rules: a
// comment start ends it, and a trailing + or - is split off unless the run
// has one of ~ ! @ # % ^ & | ` ?.
func (n *normalizer) operator(i int) int {
	s := n.src
	j := i + 1
	for j < len(s) && class[s[j]] == cOpChar {
		if (s[j] == '-' && j+1 < len(s) && s[j+1] == '-') || (s[j] == '/' && j+1 < len(s) && s[j+1] == '*') {
			break
		}
		j++
	}
	if j-i > 1 && (s[j-1] == '+' || s[j-1] == '-') {
		special := false
		for k := i; k < j; k++ {
			switch s[k] {
			case '~', '!', '@', '#', '%', '^', '&', '|', '`', '?':
				special = true
			}
		}
		if !special {
			for j-i > 1 && (s[j-1] == '+' || s[j-1] == '-') {
				j--
			}
		}
	}
	if j-i == 1 && s[i] == '-' && !n.operand() {
		// Unary minus on a numeric literal is part of the constant.
		k := skipSpaceAndComments(s, j)
		if k < len(s) && (class[s[k]] == cDigit || (s[k] == '.' && k+1 < len(s) && class[s[k+1]] == cDigit)) {
			end, _ := numberEnd(s, k)
			n.constant()
			return end
		}
	}
	n.emit(kOp)
	if j-i == 2 && s[i] == '!' && s[i+1] == '=' {
		// PostgreSQL's lexer reads != as <>: one operator, one queryid.
		n.out = append(n.out, "<>"...)
	} else {
		n.out = append(n.out, s[i:j]...)
	}
	n.listToken(kOp)
	return j
}

func skipSpaceAndComments(s string, i int) int {
	for i < len(s) {
		switch {
		case class[s[i]] == cSpace:
			i++
		case s[i] == '-' && i+1 < len(s) && s[i+1] == '-':
			i = skipLineComment(s, i)
		case s[i] == '/' && i+1 < len(s) && s[i+1] == '*':
			i = skipBlockComment(s, i)
		default:
			return i
		}
	}
	return i
}

func (n *normalizer) punct(i int) int {
	s := n.src
	c := s[i]
	switch c {
	case '\'':
		return n.stringLit(i, false)
	case '"':
		return n.quotedIdent(i, i)
	case '$':
		return n.dollar(i)
	case '.':
		if i+1 < len(s) && class[s[i+1]] == cDigit {
			return n.number(i)
		}
		n.emit(kDot)
		n.out = append(n.out, '.')
		n.listToken(kDot)
		return i + 1
	case ':':
		if i+1 < len(s) && s[i+1] == ':' {
			n.emit(kCast)
			n.out = append(n.out, "::"...)
			n.listToken(kCast)
			return i + 2
		}
		if i+1 < len(s) && s[i+1] == '=' {
			n.emit(kOp)
			n.out = append(n.out, ":="...)
			n.listToken(kOp)
			return i + 2
		}
	case '(', '[':
		n.open(c)
		return i + 1
	case ')', ']':
		n.closeBracket(c)
		return i + 1
	case ',':
		n.emit(kComma)
		n.out = append(n.out, ',')
		n.listToken(kComma)
		return i + 1
	case ';':
		n.emit(kSemi)
		n.out = append(n.out, ';')
		n.listToken(kSemi)
		n.byList = false
		return i + 1
	}
	n.emit(kOp)
	n.out = append(n.out, c)
	n.listToken(kOp)
	return i + 1
}

// dollar scans a $n parameter or a dollar-quoted string; a lone $ is emitted
// as an operator.
func (n *normalizer) dollar(i int) int {
	s := n.src
	j := i + 1
	if j < len(s) && class[s[j]] == cDigit {
		for j < len(s) && class[s[j]] == cDigit {
			j++
		}
		n.placeholder()
		return j
	}
	if j < len(s) && class[s[j]] == cIdent {
		for j < len(s) && (class[s[j]] == cIdent || class[s[j]] == cDigit) {
			j++
		}
	}
	if j < len(s) && s[j] == '$' {
		tag := s[i : j+1]
		k := j + 1
		for k+len(tag) <= len(s) {
			if s[k] == '$' && s[k:k+len(tag)] == tag {
				n.constant()
				return k + len(tag)
			}
			k++
		}
		n.constant() // unterminated: the rest is the literal
		return len(s)
	}
	n.emit(kOp)
	n.out = append(n.out, '$')
	n.listToken(kOp)
	return i + 1
}

// constant emits the next placeholder for a literal.
func (n *normalizer) constant() {
	n.literals++
	n.placeholder()
}

// placeholder emits the next placeholder, for a literal or a $n.
func (n *normalizer) placeholder() {
	n.emit(kParam)
	if n.next < 10 {
		n.out = append(n.out, '$', byte('0'+n.next))
	} else {
		n.out = append(n.out, '$')
		n.out = strconv.AppendInt(n.out, int64(n.next), 10)
	}
	n.next++
	n.listToken(kParam)
}

// word emits a keyword or unquoted identifier, lower-cased (ASCII only, as
// PostgreSQL does in multi-byte encodings).
func (n *normalizer) word(w string) {
	var prevW []byte
	if n.prev == kWord {
		prevW = n.out[n.prevWord:]
	}
	if boolOrNull(w) && !n.grammarWord(w, string(prevW)) {
		// A constant to PostgreSQL's parser, and so to queryid.
		n.constant()
		return
	}
	n.emit(kWord)
	at := len(n.out)
	n.out = append(n.out, w...)
	for k := at; k < len(n.out); k++ {
		if c := n.out[k]; 'A' <= c && c <= 'Z' {
			n.out[k] = c + 'a' - 'A'
		}
	}
	lw := n.out[at:]
	isBy := len(lw) == 2 && string(lw) == "by" && (string(prevW) == "order" || string(prevW) == "group")
	if isBy {
		n.byList, n.byDepth = true, n.depth
	} else if n.byList && endsByList(string(lw)) {
		n.byList = false
	}
	n.listToken(kWord)
	if string(lw) == "values" {
		n.vals = valuesRows{on: true, depth: n.depth, expectRow: true}
	}
	n.distinctOn = string(lw) == "on" && string(prevW) == "distinct"
	n.prevWord, n.prevIsBy = at, isBy
}

// grammarWord tells whether true, false or null (w) after the word prev
// is part of the grammar rather than a constant: "is [not] true",
// "is [not] null", a "not null" constraint, "on delete set null". A
// "not true" that does not follow "is" is NOT of a constant.
func (n *normalizer) grammarWord(w, prev string) bool {
	switch prev {
	case "is", "set":
		return true
	case "not":
		if len(w) == 4 && (w[0]|0x20) == 'n' {
			return true // null
		}
		before := n.out[:n.prevWord]
		return len(before) >= 3 && string(before[len(before)-3:]) == "is "
	}
	return false
}

// boolOrNull reports whether w is true, false or null, in any case.
func boolOrNull(w string) bool {
	if len(w) != 4 && len(w) != 5 {
		return false
	}
	var b [5]byte
	for i := range len(w) {
		c := w[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	switch string(b[:len(w)]) {
	case "true", "false", "null":
		return true
	}
	return false
}

func endsByList(w string) bool {
	switch w {
	case "limit", "offset", "having", "window", "for", "union", "intersect", "except",
		"fetch", "returning", "select", "from", "where", "into", "on":
		return true
	}
	return false
}

// operand reports whether the previous token ends an operand, so that a
// following '-' is binary.
func (n *normalizer) operand() bool {
	switch n.prev {
	case kParam, kInt, kQuoted, kClose:
		return true
	case kWord:
		return !exprKeyword(string(n.out[n.prevWord:]))
	}
	return false
}

// isGroupingWord tells the words whose bracket in a GROUP BY list holds
// grouping elements: ROLLUP (...), CUBE (...), GROUPING SETS (...).
func isGroupingWord(w string) bool { return w == "rollup" || w == "cube" || w == "sets" }

// exprKeyword reports whether an expression may start right after the
// keyword w.
func exprKeyword(w string) bool {
	switch w {
	case "select", "where", "and", "or", "not", "when", "then", "else", "case", "limit",
		"offset", "between", "like", "ilike", "in", "is", "values", "return", "returning",
		"by", "having", "on", "distinct", "all", "any", "some", "array", "exists",
		"escape", "similar", "to", "from", "as", "with", "using",
		"union", "intersect", "except", "do", "default", "into", "join",
		"lateral", "only", "fetch", "both", "leading",
		"trailing", "for", "overlaps", "isnull", "notnull", "collate":
		return true
	}
	return false
}

// spaceBeforeParen reports whether a '(' after the keyword w is written
// with a space: "in (", "values (", but "count(", "any(", "t(a, b)".
func spaceBeforeParen(w string) bool {
	switch w {
	case "select", "where", "and", "or", "not", "when", "then", "else", "case", "in",
		"values", "from", "join", "as", "on", "using", "over", "filter", "union",
		"intersect", "except", "by", "having", "returning", "with", "lateral", "set",
		"between", "is", "like", "ilike", "distinct", "limit", "offset", "into", "group",
		"window", "partition", "do", "return", "to", "only", "rows", "recursive", "materialized":
		return true
	}
	return false
}

// emit writes the space before a token of kind k and makes k the previous
// token.
func (n *normalizer) emit(k kind) {
	if n.space(k) {
		n.out = append(n.out, ' ')
	}
	n.prev, n.prevIsBy = k, false
}

func (n *normalizer) space(k kind) bool {
	if len(n.out) == n.start {
		return false
	}
	switch k {
	case kDot, kCast:
		if n.prev == kOp { // ": ::" must not become ":::"
			return true
		}
		return false
	case kClose, kComma, kSemi:
		return false
	}
	switch n.prev {
	case kNone, kOpen, kDot, kCast:
		return false
	}
	return true
}

func (n *normalizer) open(c byte) {
	// "count(", "a[1]", "array[": no space after a word or identifier;
	// "in (", "values (": a space after the keywords that take one.
	sp := n.space(kOpen)
	switch n.prev {
	case kWord:
		sp = c == '(' && spaceBeforeParen(string(n.out[n.prevWord:]))
	case kQuoted, kClose:
		sp = false
	case kParam, kInt:
		sp = c == '('
	}
	startList := n.prev == kWord && ((c == '(' && string(n.out[n.prevWord:]) == "in") ||
		(c == '[' && string(n.out[n.prevWord:]) == "array"))
	if c == '(' && n.posDepth > 0 && n.depth == n.posInner &&
		(n.prev == kOpen || n.prev == kComma || (n.prev == kWord && isGroupingWord(string(n.out[n.prevWord:])))) {
		n.posInner++ // a grouping set's bracket: (1, 2) or ROLLUP (1, 2) in GROUPING SETS (..., 3)
	}
	if c == '(' && n.posDepth == 0 {
		switch {
		case n.prev == kWord && n.distinctOn:
			n.posDepth, n.posInner = n.depth+1, n.depth+1
		case n.prev == kWord && n.byList && n.depth == n.byDepth && isGroupingWord(string(n.out[n.prevWord:])):
			n.posDepth, n.posInner = n.depth+1, n.depth+1
		case n.byList && n.depth == n.byDepth && (n.prevIsBy || n.prev == kComma):
			n.byParen = n.depth + 1
		}
	}
	if sp {
		n.out = append(n.out, ' ')
	}
	n.prev, n.prevIsBy = kOpen, false
	startRow := n.vals.on && n.depth == n.vals.depth && n.vals.expectRow && c == '('
	n.listToken(kOpen)
	n.depth++
	if startRow {
		n.vals.row = list{active: true, close: ')', depth: n.depth, state: lElem}
		n.vals.expectRow = false
	}
	if startList {
		n.lst = list{active: true, close: ')', start: len(n.out), n0: n.next, depth: n.depth, state: lElem}
		if c == '[' {
			n.lst.close = ']'
		}
	}
	n.out = append(n.out, c)
	n.lastNotSc = len(n.out)
}

func (n *normalizer) closeBracket(c byte) {
	if n.depth == n.lst.depth && c == n.lst.close && n.lst.complete() {
		// Collapse a list of constants to its first placeholder.
		n.out = append(n.out[:n.lst.start+1], '$')
		n.out = strconv.AppendInt(n.out, int64(n.lst.n0), 10)
		n.next = n.lst.n0 + 1
		n.lst.active = false
	} else {
		n.lst.active = false
	}
	if n.byList && n.depth == n.byDepth {
		n.byList = false
	}
	if n.depth == n.posDepth {
		n.posDepth, n.posInner = 0, 0
	} else if n.posDepth > 0 && n.depth == n.posInner {
		n.posInner--
	}
	if n.depth == n.byParen {
		n.byParen = 0
	}
	if n.vals.on && n.depth == n.vals.depth+1 {
		n.closeRow(c)
	}
	n.depth--
	n.prev, n.prevIsBy = kClose, false
	n.out = append(n.out, c)
	n.lastNotSc = len(n.out)
}

// closeRow ends a VALUES row: the first row of constants is kept, a later
// one like it is dropped (with the ", " before it), anything else ends the
// collapsing. The closing bracket is appended by the caller.
func (n *normalizer) closeRow(c byte) {
	v := &n.vals
	switch {
	case !v.row.complete() || c != ')':
		v.on = false
	case !v.first:
		v.first, v.firstEnd, v.arity, v.next = true, len(n.out)+1, v.row.arity, n.next
	case v.row.arity == v.arity:
		n.out = n.out[:v.firstEnd-1]
		n.next = v.next
	default:
		v.on = false
	}
	v.row.active = false
}

// listToken advances the candidate constant lists with a token of kind k
// and records where the statement's last non-';' token ends.
func (n *normalizer) listToken(k kind) {
	if k != kSemi {
		n.lastNotSc = len(n.out)
	}
	if n.vals.on {
		v := &n.vals
		switch {
		case n.depth == v.depth && k == kComma && !v.expectRow:
			v.expectRow = true
		case n.depth == v.depth && k == kOpen && v.expectRow:
			// open starts the row
		case n.depth == v.depth:
			v.on = false
		case v.row.active && n.depth == v.row.depth:
			v.row.step(k)
		default:
			v.row.active = false
		}
	}
	if !n.lst.active {
		return
	}
	if n.depth != n.lst.depth {
		n.lst.active = false
		return
	}
	n.lst.step(k)
}
