// Startup options: the settings a client passes in the "options" startup parameter.

package pgwire

import "strings"

// OptionSettings returns the settings of a StartupMessage's "options"
// parameter: "-c name=value", "-cname=value" and "--name=value" words
// (split on unescaped spaces and tabs; a backslash keeps the next
// character). Names are lower-cased with '-' read as '_'; other words are
// ignored. Nil for an empty string.
func OptionSettings(options string) map[string]string {
	words := splitOptions(options)
	if len(words) == 0 {
		return nil
	}
	out := map[string]string{}
	for i := 0; i < len(words); i++ {
		w, ok := "", true
		switch {
		case words[i] == "-c":
			if i++; i < len(words) {
				w = words[i]
			}
		case strings.HasPrefix(words[i], "-c"), strings.HasPrefix(words[i], "--"):
			w = words[i][2:]
		default:
			ok = false
		}
		name, value, found := strings.Cut(w, "=")
		if ok && found && name != "" {
			out[strings.ToLower(strings.ReplaceAll(name, "-", "_"))] = value
		}
	}
	return out
}

// splitOptions splits on unescaped white space (C's isspace) and drops
// the escaping backslashes, as PostgreSQL's pg_split_opts.
func splitOptions(s string) []string {
	var words []string
	var cur []byte
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			if i+1 < len(s) {
				i++
				cur, inWord = append(cur, s[i]), true
			}
			continue // a trailing backslash escapes nothing and is dropped
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' { // isspace
			if inWord {
				words, cur, inWord = append(words, string(cur)), cur[:0], false
			}
			continue
		}
		cur, inWord = append(cur, c), true
	}
	if inWord {
		words = append(words, string(cur))
	}
	return words
}
