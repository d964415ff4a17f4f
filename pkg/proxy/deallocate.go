// DEALLOCATE of one protocol-level statement, which the server knows under another name.

package proxy

import "strings"

// deallocateName returns the statement name of a query that is exactly one
// `DEALLOCATE [PREPARE] name` (an optional trailing semicolon and spaces
// allowed), folding an unquoted name to lower case and unescaping a quoted
// one as PostgreSQL does. ok is false for anything else, including
// DEALLOCATE ALL, comments and several statements.
func deallocateName(sql string) (name string, ok bool) {
	// Nearly every statement is not one: look at its first letter first.
	i := 0
	for i < len(sql) && (sql[i] == ' ' || sql[i] == '\t' || sql[i] == '\r' || sql[i] == '\n') {
		i++
	}
	if i == len(sql) || sql[i]|0x20 != 'd' {
		return "", false
	}
	s := strings.TrimSpace(sql)
	s = strings.TrimSpace(strings.TrimSuffix(s, ";"))
	word := func() string {
		i := 0
		for i < len(s) && isIdentByte(s[i]) {
			i++
		}
		w := s[:i]
		s = strings.TrimLeft(s[i:], " \t\r\n")
		return w
	}
	if !strings.EqualFold(word(), "deallocate") {
		return "", false
	}
	if len(s) > 0 && s[0] != '"' {
		save := s
		if w := word(); !strings.EqualFold(w, "prepare") {
			s = save
		}
	}
	switch {
	case s == "":
		return "", false
	case s[0] == '"':
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			if s[i] != '"' {
				b.WriteByte(s[i])
				continue
			}
			if i+1 < len(s) && s[i+1] == '"' {
				b.WriteByte('"')
				i++
				continue
			}
			if i != len(s)-1 || b.Len() == 0 {
				return "", false
			}
			return b.String(), true
		}
		return "", false
	default:
		w := word()
		if w == "" || s != "" || strings.EqualFold(w, "all") || (w[0] >= '0' && w[0] <= '9') {
			return "", false
		}
		return strings.ToLower(w), true
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// quoteIdent quotes a name for SQL text.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
