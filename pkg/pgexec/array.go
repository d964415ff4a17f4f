// Array values: the server's text form {a,"b c",NULL,{1,2}} as nested JSON arrays.

package pgexec

// appendArray writes an array's text form as a JSON array whose elements
// go through the element type's appender. Forms it does not expect, such
// as explicit bounds ("[0:1]={1,2}"), are written as a string of the text.
func (s *serializer) appendArray(dst, v []byte, elem kind) []byte {
	mark := len(dst)
	out, rest, ok := s.arrayLevel(dst, v, typeInfo{kind: elem})
	if !ok || len(rest) != 0 {
		return appendString(dst[:mark], v)
	}
	return out
}

// arrayLevel reads one brace level from v and returns the rest of v.
// Element delimiters are commas (true of every type the serializer knows;
// box, which uses semicolons, is written as a string).
func (s *serializer) arrayLevel(dst, v []byte, elem typeInfo) ([]byte, []byte, bool) {
	if len(v) == 0 || v[0] != '{' {
		return dst, v, false
	}
	v = v[1:]
	dst = append(dst, '[')
	if len(v) > 0 && v[0] == '}' {
		return append(dst, ']'), v[1:], true
	}
	for first := true; ; first = false {
		if !first {
			dst = append(dst, ',')
		}
		if len(v) == 0 {
			return dst, v, false
		}
		var ok bool
		switch v[0] {
		case '{':
			if dst, v, ok = s.arrayLevel(dst, v, elem); !ok {
				return dst, v, false
			}
		case '"':
			var e []byte
			if e, v, ok = s.unquote(v); !ok {
				return dst, v, false
			}
			dst = s.appendValue(dst, e, elem)
		default:
			i := 0
			for i < len(v) && v[i] != ',' && v[i] != '}' {
				i++
			}
			e := v[:i]
			v = v[i:]
			if len(e) == 4 && (e[0]|0x20) == 'n' && (e[1]|0x20) == 'u' && (e[2]|0x20) == 'l' && (e[3]|0x20) == 'l' {
				dst = append(dst, "null"...)
			} else {
				dst = s.appendValue(dst, e, elem)
			}
		}
		if len(v) == 0 {
			return dst, v, false
		}
		switch v[0] {
		case ',':
			v = v[1:]
		case '}':
			return append(dst, ']'), v[1:], true
		default:
			return dst, v, false
		}
	}
}

// unquote reads a double-quoted element, removing backslash escapes, into
// s.elem (valid until the next call) and returns the rest of v.
func (s *serializer) unquote(v []byte) ([]byte, []byte, bool) {
	s.elem = s.elem[:0]
	for i := 1; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\':
			i++
			if i == len(v) {
				return nil, v, false
			}
			s.elem = append(s.elem, v[i])
		case '"':
			if s.elem == nil {
				s.elem = []byte{} // an empty string, not NULL
			}
			return s.elem, v[i+1:], true
		default:
			s.elem = append(s.elem, c)
		}
	}
	return nil, v, false
}
