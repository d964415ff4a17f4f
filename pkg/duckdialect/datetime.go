// to_char, to_date, to_timestamp and date_trunc: PostgreSQL's template
// patterns translated to DuckDB's strftime/strptime codes.

package duckdialect

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// templateCodes maps PostgreSQL template patterns to strftime codes that
// write (and read) the same text, longest patterns first. Patterns whose
// output differs (Month and Day are blank-padded to 9 characters unless FM
// precedes them, Q, WW, IW, TZ, ordinal suffixes, ...) are not listed and
// are refused.
var templateCodes = []struct{ pg, strf string }{
	{"FMMonth", "%B"}, {"FMDay", "%A"},
	{"HH24", "%H"}, {"HH12", "%I"}, {"YYYY", "%Y"},
	{"DDD", "%j"}, {"Mon", "%b"}, {"Dy", "%a"},
	{"AM", "%p"}, {"PM", "%p"},
	{"HH", "%I"}, {"YY", "%y"}, {"MM", "%m"}, {"DD", "%d"},
	{"MI", "%M"}, {"SSSSS", ""}, {"SSSS", ""}, {"SS", "%S"}, {"MS", "%g"}, {"US", "%f"},
}

// strftimeFormat translates a template; ok is false for any pattern not
// in templateCodes. Letters outside patterns would be patterns in
// PostgreSQL, so they are refused; double-quoted text is literal.
func strftimeFormat(tmpl string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(tmpl); {
		c := tmpl[i]
		if c == '"' {
			end := strings.IndexByte(tmpl[i+1:], '"')
			if end < 0 {
				return "", false
			}
			b.WriteString(strings.ReplaceAll(tmpl[i+1:i+1+end], "%", "%%"))
			i += end + 2
			continue
		}
		matched := false
		for _, tc := range templateCodes {
			if strings.HasPrefix(tmpl[i:], tc.pg) {
				if tc.strf == "" {
					return "", false // SSSS: seconds past midnight, no strftime code
				}
				b.WriteString(tc.strf)
				i += len(tc.pg)
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '\\', c >= 0x80:
			return "", false
		case c == '%':
			b.WriteString("%%")
		default:
			b.WriteByte(c)
		}
		i++
	}
	return b.String(), true
}

// templateArg reads a to_char-style function's literal template.
func templateArg(name string, fc *pg_query.FuncCall) (string, error) {
	if len(fc.Args) != 2 {
		return "", unsupported("%s with %d arguments", name, len(fc.Args))
	}
	tmpl, ok := constString(fc.Args[1])
	if !ok {
		return "", unsupported("%s with a template that is not a literal", name)
	}
	f, ok := strftimeFormat(tmpl)
	if !ok {
		return "", unsupported("%s template '%s' (supported: YYYY YY MM DD DDD HH24 HH12 HH MI SS MS US Mon Dy AM PM FMMonth FMDay, punctuation and \"text\")", name, tmpl)
	}
	return f, nil
}

// toChar writes dates and timestamps with strftime. Numeric templates are
// refused (they contain no date pattern and fail the translation) and a
// number given with a date template fails in DuckDB's binder.
func toChar(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	f, err := templateArg("to_char", fc)
	if err != nil {
		return nil, err
	}
	return call("strftime", fc.Args[0], strConst(f)), nil
}

// toDate parses with strptime and keeps the date.
func toDate(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	f, err := parseTemplateArg("to_date", fc)
	if err != nil {
		return nil, err
	}
	return cast(call("strptime", fc.Args[0], strConst(f)), "date"), nil
}

// toTimestamp parses with strptime into a timestamp with time zone, read
// in the session's zone as PostgreSQL does; to_timestamp(epoch seconds)
// is the same function in both engines.
func toTimestamp(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	if len(fc.Args) == 1 {
		return call("to_timestamp", fc.Args[0]), nil
	}
	f, err := parseTemplateArg("to_timestamp", fc)
	if err != nil {
		return nil, err
	}
	return cast(call("strptime", fc.Args[0], strConst(f)), "timestamptz"), nil
}

// parseTemplateArg is templateArg for parsing, which also refuses YY: a
// two-digit year is put in the century nearest 2020 by PostgreSQL (69 is
// 2069) and by another rule by strptime (1969).
func parseTemplateArg(name string, fc *pg_query.FuncCall) (string, error) {
	f, err := templateArg(name, fc)
	if err != nil {
		return "", err
	}
	if strings.Contains(f, "%y") {
		return "", unsupported("%s with a two-digit year (YY)", name)
	}
	return f, nil
}

// truncFields are the date_trunc units both engines truncate alike.
// Not century or millennium: PostgreSQL's start in year 1 (2000 is in the
// 20th century), DuckDB's in year 0.
var truncFields = wordSet("microseconds milliseconds second minute hour day week month quarter year decade")

// dateTrunc keeps date_trunc's result a timestamp for a date argument
// (DuckDB would return a date): adding a zero interval turns a date into a
// timestamp and leaves timestamps as they are. PostgreSQL returns
// timestamp with time zone for a date; the instant is the same under
// SessionSQL's UTC.
func dateTrunc(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	if len(fc.Args) != 2 {
		return nil, unsupported("date_trunc with %d arguments", len(fc.Args))
	}
	field, ok := constString(fc.Args[0])
	if !ok || !truncFields[strings.ToLower(field)] {
		return nil, unsupported("date_trunc unit %q", field)
	}
	zero := cast(strConst("0 days"), "interval")
	return call("date_trunc", strConst(strings.ToLower(field)), op("+", fc.Args[1], zero)), nil
}
