// The fast path's JSON: walking an object's members without decoding them,
// and a string encoder that writes what encoding/json writes.

package mcpserver

import (
	"encoding/json"
	"unicode/utf8"
)

// members calls fn with the raw key (between its quotes, escapes kept) and
// raw value of each member of the JSON object data, in order, and reports
// whether data is one object, with nothing but whitespace around it, whose
// every member fn accepted. It checks the object's own punctuation; the
// values' insides are skipped, not checked (the caller decodes them).
func members(data []byte, fn func(key, value []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		end := stringEnd(data, i)
		if end < 0 {
			return false
		}
		key := data[i+1 : end-1]
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipSpace(data, i+1)
		vend := valueEnd(data, i)
		if vend < 0 || !fn(key, data[i:vend]) {
			return false
		}
		i = skipSpace(data, vend)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return skipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index just after the string starting at data[i]
// (a '"'), or -1 when it does not end.
func stringEnd(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// valueEnd returns the index just after the value starting at data[i], or
// -1 when there is none: a string, an object or array (brackets matched,
// strings skipped), or a literal or number running to the next delimiter.
func valueEnd(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				end := stringEnd(data, i)
				if end < 0 {
					return -1
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	case ',', '}', ']', ':':
		return -1
	}
	start := i
	for ; i < len(data); i++ {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	if i == start {
		return -1
	}
	return i
}

// jsonSafe marks the ASCII bytes encoding/json writes unescaped in a
// string when it escapes HTML, as mcp-go's encoders do: all printable ones
// but '"', '\\', '<', '>' and '&'.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string exactly as encoding/json's
// Marshal writes it: the short escapes \" \\ \b \f \n \r \t, \u00XX for the
// other control bytes and for < > &, and \u2028 and \u2029. A string that
// is not valid UTF-8 (rare: PostgreSQL sends valid UTF-8) goes to
// json.Marshal itself, because how its replacement characters are written
// depends on the build (one \ufffd escape per bad byte in encoding/json's
// own implementation; raw U+FFFD per bad sequence with GOEXPERIMENT=jsonv2).
func appendJSONString(dst []byte, s string) []byte {
	if !utf8.ValidString(s) {
		b, err := json.Marshal(s)
		if err != nil { // cannot happen for a string
			panic(err)
		}
		return append(dst, b...)
	}
	dst = append(dst, '"')
	// Valid UTF-8 needs a look at its multi-byte sequences only for U+2028
	// and U+2029 (E2 80 A8/A9).
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if jsonSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		if b == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && s[i+2]&^1 == 0xA8 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[s[i+2]&0xF])
			i += 3
			start = i
			continue
		}
		i++
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
