// Decode errors that say where in the stream they happened.

package copybin

import "fmt"

// DecodeError reports malformed or unrepresentable input with its place.
type DecodeError struct {
	Table  string // Decoder.Table, may be empty
	Column string // empty when the error is not about one field
	Row    int64  // 0-based row number within this stream
	Offset int64  // byte offset in the stream of the tuple or field; -1 when not known
	Err    error
}

func (e *DecodeError) Error() string {
	where := "copy binary stream"
	if e.Table != "" {
		where = "table " + e.Table
	}
	if e.Offset < 0 {
		return fmt.Sprintf("%s, column %s, row %d: %v", where, e.Column, e.Row, e.Err)
	}
	if e.Column != "" {
		return fmt.Sprintf("%s, column %s, row %d (byte %d): %v", where, e.Column, e.Row, e.Offset, e.Err)
	}
	return fmt.Sprintf("%s, row %d (byte %d): %v", where, e.Row, e.Offset, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }
