// Message encoding and decoding helpers for the few types the proxy reads or writes.

package proxy

import (
	"bytes"
	"encoding/binary"
	"strconv"
)

// cstring splits a NUL-terminated string off b; ok is false without a NUL.
func cstring(b []byte) (s string, rest []byte, ok bool) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return "", nil, false
	}
	return string(b[:i]), b[i+1:], true
}

// appendMsg appends a message of type typ with the given body parts.
func appendMsg(dst []byte, typ byte, parts ...[]byte) []byte {
	n := 4
	for _, p := range parts {
		n += len(p)
	}
	dst = append(dst, typ, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(dst[len(dst)-4:], uint32(n))
	for _, p := range parts {
		dst = append(dst, p...)
	}
	return dst
}

var nul = []byte{0}

// appendParse appends Parse(name, query, param types section as sent).
func appendParse(dst []byte, name, query string, params []byte) []byte {
	return appendMsg(dst, 'P', []byte(name), nul, []byte(query), nul, params)
}

// appendClose appends Close of a statement ('S') or portal ('P').
func appendClose(dst []byte, kind byte, name string) []byte {
	return appendMsg(dst, 'C', []byte{kind}, []byte(name), nul)
}

// appendErrorResponse appends an ErrorResponse.
func appendErrorResponse(dst []byte, severity, code, message string) []byte {
	body := []byte{'S'}
	body = append(body, severity...)
	body = append(body, 0, 'V')
	body = append(body, severity...)
	body = append(body, 0, 'C')
	body = append(body, code...)
	body = append(body, 0, 'M')
	body = append(body, message...)
	body = append(body, 0, 0)
	return appendMsg(dst, 'E', body)
}

// errorSeverity returns the non-localized severity of an ErrorResponse
// body ('V', PostgreSQL 9.6+), else the 'S' one.
func errorSeverity(body []byte) string {
	if v := errorField(body, 'V'); v != "" {
		return v
	}
	return errorField(body, 'S')
}

// errorField returns one field of an ErrorResponse body.
func errorField(body []byte, field byte) string {
	for len(body) > 1 {
		f := body[0]
		i := bytes.IndexByte(body[1:], 0)
		if i < 0 {
			return ""
		}
		if f == field {
			return string(body[1 : 1+i])
		}
		body = body[2+i:]
	}
	return ""
}

// errorCode returns the SQLSTATE of an ErrorResponse body.
func errorCode(body []byte) string { return errorField(body, 'C') }

// tagRows returns the row count of a CommandComplete tag and its command
// (a slice of body: every statement has one, so nothing is copied).
func tagRows(body []byte) (cmd []byte, rows int64) {
	tag := bytes.TrimRight(body, "\x00")
	cmd = tag
	if i := bytes.IndexByte(tag, ' '); i >= 0 {
		cmd = tag[:i]
	}
	if j := bytes.LastIndexByte(tag, ' '); j >= 0 {
		rows = digits(tag[j+1:])
	}
	return cmd, rows
}

// digits is the value of a non-empty run of decimal digits, or 0 for
// anything else (as strconv.ParseInt's failure was taken to mean).
func digits(b []byte) int64 {
	if len(b) > 18 { // may overflow: the rare slow way
		if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
			return n
		}
		return 0
	}
	if len(b) == 0 {
		return 0
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	return n
}
