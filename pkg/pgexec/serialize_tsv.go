// Rows to TSV: the server's text form of each value, escaped as COPY's text format does, between a name:type header and a "(N rows)" footer.

package pgexec

import (
	"strconv"
	"unicode/utf8"
)

// The TSV document (FormatTSV), lines separated by "\n", no newline at the end:
//
//	header: name:type for each column, separated by tabs
//	rows:   one line per row: values separated by tabs, NULL as \N
//	footer: (N rows) | (N rows, truncated by rows) | (N rows, truncated by bytes)
//
// Names and values are escaped as COPY ... TO (FORMAT text) escapes them, so
// a row line is the line COPY writes for that row: backslash as \\, and
// backspace, form feed, newline, carriage return, tab and vertical tab as
// \b \f \n \r \t \v; other bytes are unchanged (invalid UTF-8, which a
// UTF-8 client connection never receives, becomes U+FFFD). The one
// difference to COPY: bpchar (char(n)) values lose their trailing spaces,
// which PostgreSQL itself ignores when comparing bpchar; inside bpchar[]
// arrays the pad stays. The footer is always the last line and always ends
// with ')', so a caller can add to it (mcpserver inserts "; cursor: C").

// appendTSVHeader writes the header line: name:type per column. Type names
// contain no ':' except "oid:N" for types the serializer does not know, so
// the type is the text after the last ':' unless the field ends in
// ":oid:N".
func appendTSVHeader(dst []byte, cols []colInfo, names []byte) []byte {
	for i, c := range cols {
		if i > 0 {
			dst = append(dst, '\t')
		}
		dst = appendCopyText(dst, names[c.nameOff:c.nameOff+c.nameLen])
		dst = append(dst, ':')
		dst = append(dst, c.typ.name...)
	}
	return dst
}

// appendTSVRow adds "\n" and one row unless that would make the document
// (begun at start) longer than maxBytes once the footer is added; then it
// returns dst unchanged and false. The same rule as the JSON appendRow.
func appendTSVRow(dst []byte, start, maxBytes int, vals [][]byte, cols []colInfo) ([]byte, bool) {
	mark := len(dst)
	dst = append(dst, '\n')
	for j, v := range vals {
		if j > 0 {
			dst = append(dst, '\t')
		}
		switch {
		case v == nil:
			dst = append(dst, '\\', 'N')
		case cols[j].typ.kind == kBpchar:
			dst = appendCopyText(dst, trimPad(v))
		default:
			dst = appendCopyText(dst, v)
		}
	}
	if len(dst)-start+trailerRoom > maxBytes {
		return dst[:mark], false
	}
	return dst, true
}

// appendTSVFooter ends the document with "\n(N rows)", plus
// ", truncated by rows|bytes" inside the parentheses when truncated.
func appendTSVFooter(dst []byte, rows int, by string) []byte {
	dst = append(dst, "\n("...)
	dst = strconv.AppendInt(dst, int64(rows), 10)
	dst = append(dst, " rows"...)
	if by != "" {
		dst = append(dst, ", truncated by "...)
		dst = append(dst, by...)
	}
	return append(dst, ')')
}

// trimPad drops bpchar's trailing spaces (the server pads char(n) to n).
func trimPad(v []byte) []byte {
	n := len(v)
	for n > 0 && v[n-1] == ' ' {
		n--
	}
	return v[:n]
}

// copyEscape maps the bytes COPY's text format escapes to the letter after
// the backslash; 0 means the byte is written as is.
var copyEscape = [256]byte{'\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't', '\v': 'v'}

// appendCopyText writes s escaped as COPY's text format does.
func appendCopyText(dst, s []byte) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if e := copyEscape[c]; e != 0 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, '\\', e)
				start = i + 1
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = utf8.AppendRune(dst, utf8.RuneError)
			start = i + 1
		}
		i += size
	}
	return append(dst, s[start:]...)
}
