// Result encoding: RowDescription and DataRows written straight into the session's buffer.

package duckwire

import (
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"io"
)

// rowDescription appends RowDescription for cols with the result formats
// (PostgreSQL's rules: none = all text, one = for all, else per column).
func (ss *session) rowDescription(cols []column, formats []int16) {
	at := ss.begin('T')
	ss.out = binary.BigEndian.AppendUint16(ss.out, uint16(len(cols)))
	for i, c := range cols {
		ss.out = append(ss.out, c.name...)
		ss.out = append(ss.out, 0)
		ss.out = binary.BigEndian.AppendUint32(ss.out, 0) // table OID
		ss.out = binary.BigEndian.AppendUint16(ss.out, 0) // column number
		ss.out = binary.BigEndian.AppendUint32(ss.out, c.typ.oid)
		ss.out = binary.BigEndian.AppendUint16(ss.out, uint16(c.typ.size))
		ss.out = binary.BigEndian.AppendUint32(ss.out, uint32(c.typ.mod))
		ss.out = binary.BigEndian.AppendUint16(ss.out, uint16(formatOf(formats, i)))
	}
	ss.end(at)
}

func formatOf(formats []int16, i int) int16 {
	switch len(formats) {
	case 0:
		return 0
	case 1:
		return formats[0]
	}
	if i < len(formats) {
		return formats[i]
	}
	return 0
}

// formatCountError is PostgreSQL's error for a Bind whose result format
// count is neither 0, 1 nor the number of columns.
func formatCountError(formats, cols int) error {
	return errorf(codeProtocol, fmt.Sprintf("bind message has %d result formats but query has %d columns", formats, cols))
}

// checkFormats refuses binary for a column with no binary encoder here
// and format codes other than 0 and 1.
func checkFormats(cols []column, formats []int16) error {
	if len(formats) > 1 && len(formats) != len(cols) {
		return formatCountError(len(formats), len(cols))
	}
	for i, c := range cols {
		switch formatOf(formats, i) {
		case 0:
		case 1:
			if !canBinary(c.typ) {
				return errorf(codeNotSupported, "binary output of column "+c.name+" ("+c.typ.name+") is not supported; request text")
			}
		default:
			return errorf(codeProtocol, "unsupported result format code")
		}
	}
	return nil
}

// writeRows sends up to max rows (0: all) from rs as DataRows. It
// reports how many it sent and whether rows remain (the portal is then
// suspended). dst is the row scratch, reused across calls.
func (ss *session) writeRows(rs resultSet, formats []int16, max int64, dst []driver.Value) (sent int64, more bool, err error) {
	cols := rs.columns()
	loc := ss.settings.loc
	binaryCol := make([]bool, len(cols))
	for i := range cols {
		binaryCol[i] = formatOf(formats, i) == 1
	}
	ss.setStreaming(true)
	defer ss.setStreaming(false)
	for max <= 0 || sent < max {
		if sent&255 == 255 && ss.canceled.Load() {
			return sent, false, errorf(codeQueryCanceled, "canceling statement due to user request")
		}
		if err := rs.next(dst); err != nil {
			if err == io.EOF {
				return sent, false, nil
			}
			return sent, false, err
		}
		out := append(ss.out, 'D', 0, 0, 0, 0)
		at := len(out) - 4
		out = binary.BigEndian.AppendUint16(out, uint16(len(cols)))
		for i, v := range dst[:len(cols)] {
			if v == nil {
				out = append(out, 0xff, 0xff, 0xff, 0xff)
				continue
			}
			lp := len(out)
			out = append(out, 0, 0, 0, 0)
			if binaryCol[i] {
				if out, err = appendBinary(out, v, cols[i].typ, loc); err != nil {
					ss.out = out[:at-1]
					return sent, false, err
				}
			} else {
				out = appendText(out, v, cols[i].typ, loc)
			}
			binary.BigEndian.PutUint32(out[lp:], uint32(len(out)-lp-4))
		}
		binary.BigEndian.PutUint32(out[at:], uint32(len(out)-at))
		ss.out = out
		sent++
		if len(ss.out) >= flushAt {
			if err := ss.flush(); err != nil {
				return sent, false, err
			}
		}
	}
	return sent, true, nil
}
