// Session state in transaction mode: SET/RESET/set_config tracking for
// replay, and the text matching that pins a client to its server.

package proxy

import (
	"regexp"
	"slices"
	"sort"
	"strings"
)

// pinPattern matches statements whose effects outlive the transaction on
// that server connection: LISTEN, session advisory locks, WITH HOLD
// cursors and temporary tables and views (also CREATE OR REPLACE TEMP
// VIEW); SQL-level PREPARE is found by preparesStatement. Objects named in the
// pg_temp schema ("create function pg_temp.f()", the usual way to make a
// temporary function) are temporary too. It is text matching, so a match
// inside a string literal or comment pins too (harmless: the client just
// keeps its server).
var pinPattern = regexp.MustCompile(`(?is)\blisten\b|pg_(try_)?advisory_lock|\bwith\s+hold\b|\bcreate\s+(or\s+replace\s+)?(global\s+|local\s+)?temp(orary)?\s|\binto\s+temp(orary)?\s|\bpg_temp(_\d+)?\s*\.`)

// pinWords are words that every match of pinPattern contains: a statement
// without any of them cannot pin, and the regexp (a fifth of the proxy's
// CPU when it ran on every statement) is skipped.
var pinWords = []string{"listen", "advisory_lock", "hold", "temp", "prepare"} // "temp" also in pg_temp

// pinningFunctions are the built-in functions a fastpath FunctionCall
// ('F') names by OID whose effects outlive the transaction: set_config
// (its change is not reported, so it cannot be replayed) and the session
// advisory locks. Their OIDs are fixed in PostgreSQL's catalog.
var pinningFunctions = map[uint32]bool{
	2078: true, // set_config(text, text, boolean)
	2880: true, // pg_advisory_lock(bigint)
	2881: true, // pg_advisory_lock_shared(bigint)
	2882: true, // pg_try_advisory_lock(bigint)
	2883: true, // pg_try_advisory_lock_shared(bigint)
	2886: true, // pg_advisory_lock(integer, integer)
	2887: true, // pg_advisory_lock_shared(integer, integer)
	2888: true, // pg_try_advisory_lock(integer, integer)
	2889: true, // pg_try_advisory_lock_shared(integer, integer)
}

// firstNormalOID is PostgreSQL's FirstNormalObjectId: objects made after
// initdb (user and extension functions) have OIDs from here on.
const firstNormalOID = 16384

// pinsByFastpath tells whether a fastpath FunctionCall of the function
// with this OID pins the client: one of pinningFunctions, or any function
// not built in, whose effects the proxy cannot know.
func pinsByFastpath(oid uint32) bool {
	return oid >= firstNormalOID || pinningFunctions[oid]
}

// pins reports whether sql pins the client to its server.
func pins(sql string, backslash bool) bool {
	return scanWords(sql).pin && pinsText(sql, backslash)
}

// pinsText is pins once a pin word was seen.
func pinsText(sql string, backslash bool) bool {
	return pinPattern.MatchString(sql) || preparesStatement(sql, backslash)
}

// preparesStatement tells whether sql makes an SQL-level prepared
// statement, which outlives the transaction: a statement of sql that
// starts with PREPARE (split as PostgreSQL splits it, leading comments
// skipped; not PREPARE TRANSACTION), or "PREPARE name AS" / "PREPARE name
// (" anywhere else, as in the string a DO block EXECUTEs. A word after
// PREPARE that is an SQL keyword (WITH prepare AS (...), prepare IN (...))
// is no statement name.
func preparesStatement(sql string, backslash bool) bool {
	if !containsFold(sql, "prepare") {
		return false
	}
	for _, st := range splitStatementsEsc(sql, backslash) {
		f := strings.Fields(trimLeadingComments(st))
		if len(f) > 0 && strings.EqualFold(f[0], "prepare") && (len(f) < 2 || !strings.EqualFold(f[1], "transaction")) {
			return true
		}
	}
	for _, m := range preparePattern.FindAllStringSubmatch(sql, -1) {
		if !notStatementName[strings.ToLower(m[1])] {
			return true
		}
	}
	return false
}

// preparePattern finds PREPARE name AS and PREPARE name ( in any text.
var preparePattern = regexp.MustCompile(`(?is)\bprepare\s+("(?:[^"]|"")*"|[A-Za-z_\x80-\xff][^\s(;'"]*)\s*(?:\(|as\b)`)

// notStatementName are the words after "prepare" in ordinary statements
// that use prepare as a name (a CTE, a column).
var notStatementName = map[string]bool{
	"as": true, "in": true, "is": true, "not": true, "and": true, "or": true, "like": true, "ilike": true,
	"between": true, "similar": true, "from": true, "where": true, "on": true, "then": true, "else": true,
	"when": true, "end": true, "asc": true, "desc": true, "using": true, "over": true, "filter": true,
}

// words is what one pass over a statement's text found: a pin word
// (pinWords), a word that may change settings or decide their fate
// (varWord) and one that may drop prepared statements ("discard", "deallocate"). The
// pass replaces a scan per word on every statement.
type words struct{ pin, vars, drop bool }

func scanWords(sql string) words {
	var w words
	for i := 0; i < len(sql); i++ {
		rest := sql[i:]
		switch sql[i] | 0x20 {
		case 'l':
			w.pin = w.pin || hasPrefixFold(rest, "listen")
		case 'a':
			w.pin = w.pin || hasPrefixFold(rest, "advisory_lock")
			w.vars = w.vars || hasPrefixFold(rest, "abo")
		case 'h':
			w.pin = w.pin || hasPrefixFold(rest, "hold")
		case 't':
			w.pin = w.pin || hasPrefixFold(rest, "temp")
		case 'p':
			w.pin = w.pin || hasPrefixFold(rest, "prepare")
		case 'd':
			w.drop = w.drop || hasPrefixFold(rest, "discard") || hasPrefixFold(rest, "deallocate")
			w.vars = w.vars || hasPrefixFold(rest, "dis")
		case 's', 'r', 'c', 'e':
			w.vars = w.vars || varWord(rest)
		}
	}
	return w
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && equalFoldASCII(s[:len(prefix)], prefix)
}

var setConfigPattern = regexp.MustCompile(`(?i)set_config\s*\(\s*'((?:[^']|'')*)'\s*,\s*'((?:[^']|'')*)'\s*,\s*(false|true)\s*\)`)

// varOp is one change to the session's settings, or a transaction
// control statement that decides the fate of the changes before it.
type varOp struct {
	reset   bool   // RESET name, or RESET ALL when key is ""
	discard bool   // DISCARD ALL: RESET ALL, and the role and session authorization too
	key     string // lower-case setting name; a savepoint's name for tx ops
	stmt    string // the statement that sets it, replayed verbatim
	tx      txOp   // txNone for a change of a setting
	idx     int    // which statement of its message's text it is, from 0
	tag     string // the CommandComplete tag its statement answers with; "" any
}

// txOp is a transaction control statement, kept in order with the
// setting changes so that a savepoint undoes exactly what followed it.
type txOp uint8

const (
	txNone txOp = iota
	txSavepoint
	txRelease    // RELEASE [SAVEPOINT] name
	txRollbackTo // ROLLBACK [WORK|TRANSACTION] TO [SAVEPOINT] name
	txCommit     // COMMIT, END (tagged ROLLBACK in an aborted transaction)
	txRollback   // ROLLBACK, ABORT
	txIgnore     // a statement that changes no setting kept (SET LOCAL, ...)
)

// varOps extracts the setting changes in sql (text matching, statement by
// statement). SET LOCAL and transaction characteristics are skipped.
func varOps(sql string, backslash bool) []varOp {
	if !mayChangeVars(sql) {
		return nil
	}
	return splitVarOps(sql, backslash)
}

// splitVarOps is varOps once the filter has passed.
func splitVarOps(sql string, backslash bool) []varOp {
	var ops []varOp
	for idx, st := range splitStatementsEsc(sql, backslash) {
		st = trimLeadingComments(st)
		f := strings.Fields(strings.ToLower(st))
		if len(f) == 0 {
			continue
		}
		n := len(ops)
		switch {
		case f[0] == "reset" && len(f) >= 2:
			switch {
			case f[1] == "all":
				ops = append(ops, varOp{reset: true, tag: "RESET"})
			case f[1] == "session" && len(f) >= 3 && f[2] == "authorization":
				ops = append(ops, varOp{reset: true, key: "session_authorization", tag: "RESET"})
			default:
				ops = append(ops, varOp{reset: true, key: varAlias(strings.Trim(f[1], `"`)), tag: "RESET"})
			}
		case f[0] == "discard" && len(f) >= 2 && f[1] == "all":
			ops = append(ops, varOp{reset: true, discard: true, tag: "DISCARD ALL"})
		case f[0] == "set" && len(f) >= 3 && f[1] == "session" && f[2] == "characteristics":
			ops = append(ops, sessionCharacteristics(f)...)
		case f[0] == "set" && len(f) >= 2:
			ops = append(ops, setOp(st, f))
		default:
			if op, ok := txControl(st, f); ok {
				ops = append(ops, op)
			}
		}
		if definesRoutine(f) {
			continue // its body, quoted or BEGIN ATOMIC, is only defined
		}
		for _, m := range setConfigPattern.FindAllStringSubmatch(setConfigCode(st, backslash, f[0] == "do"), -1) {
			if strings.EqualFold(m[3], "false") {
				ops = append(ops, varOp{key: strings.ToLower(strings.ReplaceAll(m[1], "''", "'")),
					stmt: "SELECT pg_catalog.set_config('" + m[1] + "', '" + m[2] + "', false)"})
			}
		}
		for i := n; i < len(ops); i++ {
			ops[i].idx = idx
		}
	}
	return ops
}

// setOp is what a SET statement st (f: its lower-case words) changes: a
// setting of the session, or nothing kept (SET LOCAL, SET TRANSACTION,
// SET CONSTRAINTS), which still answers with the SET tag.
func setOp(st string, f []string) varOp {
	i := 1
	if f[1] == "session" && len(f) >= 3 {
		if f[2] == "authorization" {
			return varOp{key: "session_authorization", stmt: st, tag: "SET"}
		}
		i = 2
	}
	name, after, _ := strings.Cut(f[i], "=") // SET name=value is two words
	switch name {
	case "local", "transaction", "constraints":
		return varOp{tx: txIgnore, tag: "SET"}
	}
	rest := f[i+1:]
	if (name == "time" && len(rest) > 0 && rest[0] == "zone") || (name == "xml" && len(rest) > 0 && rest[0] == "option") {
		rest = rest[1:]
	}
	key := varAlias(strings.Trim(name, `"`))
	// SET name TO DEFAULT (and SET TIME ZONE LOCAL) is RESET name.
	val := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(after+" "+strings.Join(rest, " ")), ";"))
	if v, ok := strings.CutPrefix(val, "to "); ok {
		val = strings.TrimSpace(v)
	} else if v, ok := strings.CutPrefix(val, "="); ok {
		val = strings.TrimSpace(v)
	}
	if val == "default" || (key == "timezone" && val == "local") {
		return varOp{reset: true, key: key, tag: "SET"}
	}
	return varOp{key: key, stmt: st, tag: "SET"}
}

// varAlias is the setting a SET or RESET form names: SET TIME ZONE is
// timezone, SET SCHEMA search_path, SET NAMES client_encoding, SET XML
// OPTION xmloption, as PostgreSQL's grammar maps them.
func varAlias(name string) string {
	switch name {
	case "time":
		return "timezone"
	case "schema":
		return "search_path"
	case "names":
		return "client_encoding"
	case "xml":
		return "xmloption"
	}
	return name
}

// sessionCharacteristics is what SET SESSION CHARACTERISTICS AS
// TRANSACTION changes (f: its lower-case words): the session's defaults
// for the transactions to come, one setting per clause, each replayed
// with set_config. A clause it cannot read gives an op whose tag never
// fits, so the server's settings count as unknown (session.unsure).
func sessionCharacteristics(f []string) []varOp {
	w := strings.Fields(strings.ReplaceAll(strings.Join(f[3:], " "), ",", " "))
	w = slices.DeleteFunc(w, func(s string) bool { return s == ";" })
	if len(w) < 3 || w[0] != "as" || w[1] != "transaction" {
		return []varOp{{tx: txIgnore, tag: "?"}}
	}
	var ops []varOp
	set := func(key, value string) {
		ops = append(ops, varOp{key: key, tag: "SET",
			stmt: "SELECT pg_catalog.set_config('" + key + "', '" + value + "', false)"})
	}
	for i := 2; i < len(w); {
		w2 := ""
		if i+1 < len(w) {
			w2 = w[i+1]
		}
		switch {
		case w[i] == "isolation" && w2 == "level" && i+2 < len(w):
			level := strings.TrimSuffix(w[i+2], ";")
			i += 3
			if (level == "repeatable" || level == "read") && i < len(w) {
				level += " " + strings.TrimSuffix(w[i], ";")
				i++
			}
			switch level {
			case "serializable", "repeatable read", "read committed", "read uncommitted":
				set("default_transaction_isolation", level)
			default:
				return []varOp{{tx: txIgnore, tag: "?"}}
			}
		case w[i] == "read" && (strings.TrimSuffix(w2, ";") == "only" || strings.TrimSuffix(w2, ";") == "write"):
			set("default_transaction_read_only", map[bool]string{true: "on", false: "off"}[strings.HasPrefix(w2, "only")])
			i += 2
		case strings.TrimSuffix(w[i], ";") == "deferrable":
			set("default_transaction_deferrable", "on")
			i++
		case w[i] == "not" && strings.TrimSuffix(w2, ";") == "deferrable":
			set("default_transaction_deferrable", "off")
			i += 2
		default:
			return []varOp{{tx: txIgnore, tag: "?"}}
		}
	}
	if len(ops) == 0 {
		return []varOp{{tx: txIgnore, tag: "?"}}
	}
	return ops
}

// trimLeadingComments drops the space and comments before a statement's
// first word.
func trimLeadingComments(st string) string {
	for {
		st = strings.TrimLeft(st, " \t\n\r\f")
		switch {
		case strings.HasPrefix(st, "--"):
			i := strings.IndexAny(st, "\n\r")
			if i < 0 {
				return ""
			}
			st = st[i+1:]
		case strings.HasPrefix(st, "/*"):
			st = st[min(commentEnd(st, 0)+1, len(st)):]
		default:
			return st
		}
	}
}

// settingsTag tells whether a CommandComplete tag is that of a statement
// that changes settings or decides their fate: one the proxy did not
// follow (its text not recognised) leaves what the server has unknown.
func settingsTag(tag []byte) bool {
	switch string(tag) {
	case "SET", "RESET", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "DISCARD ALL":
		return true
	}
	return false
}

// txControl recognises the transaction control statements that decide
// what becomes of setting changes: f is st's lower-case words.
func txControl(st string, f []string) (varOp, bool) {
	switch f[0] {
	case "commit", "end":
		return varOp{tx: txCommit}, true
	case "abort":
		return varOp{tx: txRollback, tag: "ROLLBACK"}, true
	case "rollback":
		for i := 1; i < len(f) && i <= 2; i++ {
			if f[i] == "to" {
				name := savepointName(st, f, i+1)
				return varOp{tx: txRollbackTo, key: name, tag: "ROLLBACK"}, name != ""
			}
		}
		return varOp{tx: txRollback, tag: "ROLLBACK"}, true
	case "savepoint":
		name := savepointName(st, f, 1)
		return varOp{tx: txSavepoint, key: name, tag: "SAVEPOINT"}, name != ""
	case "release":
		name := savepointName(st, f, 1)
		return varOp{tx: txRelease, key: name, tag: "RELEASE"}, name != ""
	}
	return varOp{}, false
}

// savepointName is the savepoint a statement names at word i of f (its
// lower-case words), skipping the optional SAVEPOINT: folded to lower
// case unless quoted, as PostgreSQL folds identifiers. "" when it cannot
// tell.
func savepointName(st string, f []string, i int) string {
	if i < len(f) && f[i] == "savepoint" && i+1 < len(f) {
		i++
	}
	if i >= len(f) {
		return ""
	}
	w := strings.TrimRight(f[i], ";")
	if !strings.HasPrefix(w, `"`) {
		return w
	}
	// A quoted name keeps its case: find it in the original text.
	at := strings.Index(st, `"`)
	if at < 0 {
		return ""
	}
	var b strings.Builder
	for j := at + 1; j < len(st); j++ {
		if st[j] == '"' {
			if j+1 < len(st) && st[j+1] == '"' {
				b.WriteByte('"')
				j++
				continue
			}
			return b.String() // as PostgreSQL names it: "a" is a
		}
		b.WriteByte(st[j])
	}
	return ""
}

// fits tells whether a CommandComplete tag is the answer op's statement
// gives: if not, the statements of the text were not matched with their
// answers as they ran (a split the proxy got wrong).
func (op varOp) fits(tag []byte) bool {
	switch {
	case op.tx == txCommit:
		return string(tag) == "COMMIT" || string(tag) == "ROLLBACK"
	case op.tag == "":
		return true
	}
	return string(tag) == op.tag
}

// mayChangeVars is a cheap filter before the statement split: a setting
// changes only with SET, RESET, DISCARD or set_config, and its fate is
// decided by COMMIT, END, ROLLBACK, ABORT, SAVEPOINT and RELEASE.
func mayChangeVars(sql string) bool {
	for i := 0; i+3 <= len(sql); i++ {
		switch sql[i] | 0x20 {
		case 's', 'r', 'd', 'c', 'e', 'a':
			if varWord(sql[i:]) {
				return true
			}
		}
	}
	return false
}

// varWord tells whether rest starts with the first three letters of a
// word that mayChangeVars looks for, in any case.
func varWord(rest string) bool {
	if len(rest) < 3 {
		return false
	}
	switch uint32(rest[0]|0x20)<<16 | uint32(rest[1]|0x20)<<8 | uint32(rest[2]|0x20) {
	case 's'<<16 | 'e'<<8 | 't',
		's'<<16 | 'a'<<8 | 'v',
		'r'<<16 | 'e'<<8 | 's',
		'r'<<16 | 'o'<<8 | 'l',
		'r'<<16 | 'e'<<8 | 'l',
		'd'<<16 | 'i'<<8 | 's',
		'c'<<16 | 'o'<<8 | 'm',
		'e'<<16 | 'n'<<8 | 'd',
		'a'<<16 | 'b'<<8 | 'o':
		return true
	}
	return false
}

// splitStatements splits on semicolons outside quotes, dollar quotes and
// comments, as PostgreSQL's parser splits a simple Query: a statement
// with nothing but comments and space in it is none, so the n-th one
// here is the one PostgreSQL answers n-th.
func splitStatements(sql string) []string { return splitStatementsEsc(sql, false) }

// splitStatementsEsc is splitStatements where, with backslash (the
// session's standard_conforming_strings is off), a backslash escapes a
// quote in every string, not only in E-strings (E'...').
func splitStatementsEsc(sql string, backslash bool) []string {
	var out []string
	start, content := 0, false
	// The BEGIN ... END body of CREATE FUNCTION or PROCEDURE (BEGIN
	// ATOMIC) holds semicolons that end no statement, as psql and the
	// server read it: its first words, and the depth of BEGIN (and CASE)
	// inside it.
	var words [4]string
	nwords, depth := 0, 0
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case c|0x20 >= 'a' && c|0x20 <= 'z' || c == '_' || c >= 0x80:
			content = true
			j := i + 1
			for j < len(sql) && identByte(sql[j]) {
				j++
			}
			w := sql[i:j]
			if nwords < len(words) {
				words[nwords] = w
				nwords++
			}
			if definesRoutine(words[:nwords]) {
				switch {
				case strings.EqualFold(w, "begin"), depth > 0 && strings.EqualFold(w, "case"):
					depth++
				case depth > 0 && strings.EqualFold(w, "end"):
					depth--
				}
			}
			i = j - 1
		case c == '\'' || c == '"':
			content = true
			i = quoteEnd(sql, i, backslash)
		case c == '$' && (i == 0 || !identByte(sql[i-1])):
			content = true
			i = dollarEnd(sql, i)
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			j := strings.IndexAny(sql[i:], "\n\r") // either ends it in PostgreSQL
			if j < 0 {
				i = len(sql)
			} else {
				i += j
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			i = commentEnd(sql, i)
		case c == ';' && depth == 0:
			if content {
				out = append(out, strings.TrimSpace(sql[start:i]))
			}
			start, content, nwords = i+1, false, 0
		case c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f':
			content = true
		}
	}
	if content && start < len(sql) {
		out = append(out, strings.TrimSpace(sql[start:]))
	}
	return out
}

// setConfigCode is st where set_config calls run: its comments, and the
// dollar-quoted strings but those of a DO block (a CREATE FUNCTION body is
// only defined), blanked out. String literals stay: they are set_config's
// arguments.
func setConfigCode(st string, backslash, do bool) string {
	var b []byte // a copy, once something is blanked
	blank := func(from, to int) {
		if b == nil {
			b = []byte(st)
		}
		for k := from; k < to && k < len(b); k++ {
			b[k] = ' '
		}
	}
	for i := 0; i < len(st); i++ {
		c := st[i]
		switch {
		case c == '\'' || c == '"':
			i = quoteEnd(st, i, backslash)
		case c == '$' && (i == 0 || !identByte(st[i-1])):
			j := dollarEnd(st, i)
			if j == i {
				break // $1, no quote
			}
			tag := strings.IndexByte(st[i+1:], '$') + 2
			switch body, bodyEnd := i+tag, j+1-tag; {
			case !do:
				blank(i, j+1)
			case j >= len(st) || bodyEnd < body:
				// unterminated: the server refuses the statement
			default:
				// A DO block's body runs: its own comments and
				// strings count as in any statement.
				if inner := setConfigCode(st[body:bodyEnd], backslash, false); inner != st[body:bodyEnd] {
					if b == nil {
						b = []byte(st)
					}
					copy(b[body:], inner)
				}
			}
			i = j
		case c == '-' && i+1 < len(st) && st[i+1] == '-':
			j := strings.IndexAny(st[i:], "\n\r")
			if j < 0 {
				j = len(st) - i
			}
			blank(i, i+j)
			i += j
		case c == '/' && i+1 < len(st) && st[i+1] == '*':
			j := commentEnd(st, i)
			blank(i, j+1)
			i = j
		}
	}
	if b == nil {
		return st
	}
	return string(b)
}

// definesRoutine reports whether the statement of words f (in any case)
// is CREATE [OR REPLACE] FUNCTION or PROCEDURE.
func definesRoutine(f []string) bool {
	i := 1
	if len(f) > 3 && strings.EqualFold(f[1], "or") && strings.EqualFold(f[2], "replace") {
		i = 3
	}
	return len(f) > i && strings.EqualFold(f[0], "create") && (strings.EqualFold(f[i], "function") || strings.EqualFold(f[i], "procedure"))
}

// quoteEnd is where the string or quoted identifier opening at sql[i]
// ends (its closing quote; len(sql) if none). A string written E'...'
// may escape its quote with a backslash.
func quoteEnd(sql string, i int, backslash bool) int {
	q := sql[i]
	escapes := q == '\'' && (backslash || i > 0 && sql[i-1]|0x20 == 'e' && (i == 1 || !identByte(sql[i-2])))
	for j := i + 1; j < len(sql); j++ {
		switch sql[j] {
		case '\\':
			if escapes {
				j++
			}
		case q:
			return j
		}
	}
	return len(sql)
}

// dollarEnd is where a dollar-quoted string opening at sql[i] ends (the
// last byte of its closing tag; len(sql) if none), or i when the $ opens
// none ($1, a parameter).
func dollarEnd(sql string, i int) int {
	j := i + 1
	for j < len(sql) && identByte(sql[j]) && sql[j] != '$' && (j > i+1 || sql[j] < '0' || sql[j] > '9') {
		j++
	}
	if j >= len(sql) || sql[j] != '$' {
		return i
	}
	tag := sql[i : j+1]
	k := strings.Index(sql[j+1:], tag)
	if k < 0 {
		return len(sql)
	}
	return j + k + len(tag)
}

// commentEnd is the last byte of the block comment (nested as
// PostgreSQL nests them) opening at sql[i]; len(sql) if it never closes.
func commentEnd(sql string, i int) int {
	depth := 0
	for j := i; j+1 < len(sql); j++ {
		switch {
		case sql[j] == '/' && sql[j+1] == '*':
			depth++
			j++
		case sql[j] == '*' && sql[j+1] == '/':
			depth--
			j++
			if depth == 0 {
				return j
			}
		}
	}
	return len(sql)
}

// identByte tells whether b may be part of an unquoted identifier.
func identByte(b byte) bool {
	return b == '_' || b == '$' || b >= '0' && b <= '9' || b|0x20 >= 'a' && b|0x20 <= 'z' || b >= 0x80
}

// reportedSettings are the settings a client can change that PostgreSQL
// reports with ParameterStatus when they change.
var reportedSettings = map[string]bool{
	"application_name": true, "client_encoding": true, "datestyle": true,
	"default_transaction_read_only": true, "intervalstyle": true,
	"standard_conforming_strings": true, "timezone": true,
}

// noteReported records, in transaction mode, a reported setting's new
// value as a change to replay, like a SET: the server says what changed
// even when the text matching saw nothing (a function or DO block that
// calls set_config). It takes effect, like a SET, when the statement's
// transaction ends without a rollback; a SET LOCAL's value and its
// restoration at the end of the transaction both pass through here, the
// restoration last.
func (s *session) noteReported(name, value string) {
	key := strings.ToLower(name)
	if !s.rename || !reportedSettings[key] {
		return
	}
	if _, ok := s.start[key]; ok && s.resetsLast(key) {
		// The report of a RESET (PostgreSQL sends it before
		// ReadyForQuery, after the statement's CommandComplete): the
		// server's default, where the client's startup value stands.
		return
	}
	s.pending = append(s.pending, varOp{key: key,
		stmt: "SELECT pg_catalog.set_config(" + quoteLiteral(key) + ", " + quoteLiteral(value) + ", false)"})
}

// resetsLast tells whether the last pending op that touches the setting
// key resets it.
func (s *session) resetsLast(key string) bool {
	for i := len(s.pending) - 1; i >= 0; i-- {
		op := s.pending[i]
		switch {
		case op.tx != txNone:
		case op.reset && (op.key == "" || op.key == key):
			return true
		case op.key == key:
			return false
		}
	}
	return false
}

// vars is a client's settings: name to the statement that set it.
type vars map[string]string

// apply makes the changes of ops (a transaction's, kept); restored says
// that a RESET or DISCARD ALL brought back startup settings (restoreStart).
func (v vars) apply(ops []varOp, start vars) (restored bool) {
	for _, op := range ops {
		switch {
		case op.tx != txNone:
			// a savepoint's mark
		case op.discard:
			clear(v)
			restored = restoreStart(v, start, "") || restored
		case op.reset && op.key == "":
			// RESET ALL leaves the role and the session authorization
			// (GUC_NO_RESET_ALL in PostgreSQL)
			for k := range v {
				if k != "role" && k != "session_authorization" {
					delete(v, k)
				}
			}
			restored = restoreStart(v, start, "") || restored
		case op.key == "session_authorization":
			// setting it, or resetting it, resets the role too
			delete(v, "role")
			if op.reset {
				delete(v, op.key)
			} else {
				v[op.key] = op.stmt
			}
		case op.reset:
			delete(v, op.key)
			restored = restoreStart(v, start, op.key) || restored
		default:
			v[op.key] = op.stmt
		}
	}
	return restored
}

// restoreStart gives v back the startup settings (all, or the one named
// key), which are what RESET returns to on PostgreSQL. The proxy applied
// them with set_config, so the server's RESET went to its own defaults
// instead: true when that happened and the server must be set again.
func restoreStart(v, start vars, key string) bool {
	if key != "" {
		stmt, ok := start[key]
		if ok {
			v[key] = stmt
		}
		return ok
	}
	for k, stmt := range start {
		v[k] = stmt
	}
	return len(start) > 0
}

// resetAll is what puts a server's settings back to its login's before a
// replay: RESET ALL leaves the role and the session authorization as
// they are, SET SESSION AUTHORIZATION DEFAULT resets both (any user may
// run it).
const resetAll = "SET SESSION AUTHORIZATION DEFAULT;\nRESET ALL;\n"

// key is a fingerprint of the settings; "" when there are none. It is
// also their replay, the role last (replayOrder).
func (v vars) key() string { return v.replay(false) }

// replay is the settings' statements in replay order: the others by name,
// then the session authorization and the role last, or (roleFirst) the
// authorization and the role first. A client that dropped privileges after
// setting what only its login may set needs the first order; one that
// raised them (SET ROLE to a superuser role) before setting such a thing
// needs the second; syncServer tries one, then the other.
func (v vars) replay(roleFirst bool) string {
	if len(v) == 0 {
		return ""
	}
	names := make([]string, 0, len(v))
	for k := range v {
		names = append(names, k)
	}
	// The session authorization before the role: setting it resets the
	// role.
	rank := func(k string) int {
		switch k {
		case "session_authorization":
			return 1
		case "role":
			return 2
		}
		if roleFirst {
			return 3
		}
		return 0
	}
	sort.Slice(names, func(i, j int) bool {
		if ri, rj := rank(names[i]), rank(names[j]); ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	var b strings.Builder
	for _, k := range names {
		b.WriteString(v[k])
		b.WriteString("\n;\n") // a statement may end in a -- comment
	}
	return b.String()
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// backslash tells whether the client's strings escape quotes with
// backslashes everywhere (standard_conforming_strings off), for the
// statement split.
// It is read where statements are planned, and changed where answers are
// relayed: an atomic.
func (s *session) backslash() bool { return s.scsOff.Load() }
