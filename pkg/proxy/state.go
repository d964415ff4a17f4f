// Session state in transaction mode: SET/RESET/set_config tracking for
// replay, and the text matching that pins a client to its server.

package proxy

import (
	"regexp"
	"sort"
	"strings"
)

// pinPattern matches statements whose effects outlive the transaction on
// that server connection: LISTEN, session advisory locks, WITH HOLD
// cursors, temporary tables and SQL-level PREPARE. It is text matching,
// so a match inside a string literal or comment pins too (harmless: the
// client just keeps its server).
var pinPattern = regexp.MustCompile(`(?is)\blisten\b|pg_(try_)?advisory_lock|\bwith\s+hold\b|\bcreate\s+(global\s+|local\s+)?temp(orary)?\s|\binto\s+temp(orary)?\s|^\s*prepare\s`)

// pinWords are words that every match of pinPattern contains: a statement
// without any of them cannot pin, and the regexp (a fifth of the proxy's
// CPU when it ran on every statement) is skipped.
var pinWords = []string{"listen", "advisory_lock", "hold", "temp", "prepare"}

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
func pins(sql string) bool {
	return scanWords(sql).pin && pinPattern.MatchString(sql)
}

// words is what one pass over a statement's text found: a pin word
// (pinWords), a word that may change settings ("set", "res", "dis") and
// one that may drop prepared statements ("discard", "deallocate"). The
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
		case 'h':
			w.pin = w.pin || hasPrefixFold(rest, "hold")
		case 't':
			w.pin = w.pin || hasPrefixFold(rest, "temp")
		case 'p':
			w.pin = w.pin || hasPrefixFold(rest, "prepare")
		case 's':
			w.vars = w.vars || hasPrefixFold(rest, "set")
		case 'r':
			w.vars = w.vars || hasPrefixFold(rest, "res")
		case 'd':
			if hasPrefixFold(rest, "dis") {
				w.vars = true
				w.drop = w.drop || hasPrefixFold(rest, "discard")
			}
			w.drop = w.drop || hasPrefixFold(rest, "deallocate")
		}
	}
	return w
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && equalFoldASCII(s[:len(prefix)], prefix)
}

var setConfigPattern = regexp.MustCompile(`(?i)set_config\s*\(\s*'((?:[^']|'')*)'\s*,\s*'((?:[^']|'')*)'\s*,\s*(false|true)\s*\)`)

// varOp is one change to the session's settings.
type varOp struct {
	reset bool   // RESET name, or RESET ALL when key is ""
	key   string // lower-case setting name
	stmt  string // the statement that sets it, replayed verbatim
}

// varOps extracts the setting changes in sql (text matching, statement by
// statement). SET LOCAL and transaction characteristics are skipped.
func varOps(sql string) []varOp {
	if !mayChangeVars(sql) {
		return nil
	}
	return splitVarOps(sql)
}

// splitVarOps is varOps once the filter has passed.
func splitVarOps(sql string) []varOp {
	var ops []varOp
	for _, st := range splitStatements(sql) {
		low := strings.ToLower(st)
		f := strings.Fields(low)
		if len(f) == 0 {
			continue
		}
		switch {
		case f[0] == "reset" && len(f) >= 2:
			if f[1] == "all" {
				ops = append(ops, varOp{reset: true})
			} else {
				ops = append(ops, varOp{reset: true, key: strings.Trim(f[1], `"`)})
			}
		case f[0] == "discard" && len(f) >= 2 && f[1] == "all":
			ops = append(ops, varOp{reset: true})
		case f[0] == "set" && len(f) >= 3:
			i := 1
			if f[1] == "session" {
				if f[2] == "characteristics" || f[2] == "authorization" {
					if f[2] == "authorization" {
						ops = append(ops, varOp{key: "session_authorization", stmt: st})
					}
					continue
				}
				i = 2
			}
			name := f[i]
			switch name {
			case "local", "transaction", "constraints":
				continue
			case "time":
				ops = append(ops, varOp{key: "timezone", stmt: st})
				continue
			}
			if j := strings.IndexAny(name, "="); j > 0 {
				name = name[:j]
			}
			ops = append(ops, varOp{key: strings.Trim(name, `"`), stmt: st})
		}
		for _, m := range setConfigPattern.FindAllStringSubmatch(st, -1) {
			if strings.EqualFold(m[3], "false") {
				ops = append(ops, varOp{key: strings.ToLower(strings.ReplaceAll(m[1], "''", "'")),
					stmt: "SELECT pg_catalog.set_config('" + m[1] + "', '" + m[2] + "', false)"})
			}
		}
	}
	return ops
}

// mayChangeVars is a cheap filter before the statement split.
func mayChangeVars(sql string) bool {
	for i := 0; i+3 <= len(sql); i++ {
		c := sql[i] | 0x20
		if c == 's' || c == 'r' || c == 'd' {
			w := sql[i : i+3]
			if equalFoldASCII(w, "set") || equalFoldASCII(w, "res") || equalFoldASCII(w, "dis") {
				return true
			}
		}
	}
	return false
}

// splitStatements splits on semicolons outside quotes and comments.
func splitStatements(sql string) []string {
	var out []string
	start := 0
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; {
		case c == '\'' || c == '"':
			j := strings.IndexByte(sql[i+1:], c)
			if j < 0 {
				i = len(sql)
			} else {
				i += j + 1
			}
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				i = len(sql)
			} else {
				i += j
			}
		case c == ';':
			if s := strings.TrimSpace(sql[start:i]); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if start < len(sql) {
		if s := strings.TrimSpace(sql[start:]); s != "" {
			out = append(out, s)
		}
	}
	return out
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
	s.pending = append(s.pending, varOp{key: key,
		stmt: "SELECT pg_catalog.set_config(" + quoteLiteral(key) + ", " + quoteLiteral(value) + ", false)"})
}

// vars is a client's settings: name to the statement that set it.
type vars map[string]string

func (v vars) apply(ops []varOp) {
	for _, op := range ops {
		switch {
		case op.reset && op.key == "":
			clear(v)
		case op.reset:
			delete(v, op.key)
		default:
			v[op.key] = op.stmt
		}
	}
}

// key is a fingerprint of the settings; "" when there are none.
func (v vars) key() string {
	if len(v) == 0 {
		return ""
	}
	names := make([]string, 0, len(v))
	for k := range v {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, k := range names {
		b.WriteString(v[k])
		b.WriteString(";\n")
	}
	return b.String()
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
