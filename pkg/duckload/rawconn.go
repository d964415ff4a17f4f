// Reaching the C connection handle under duckdb-go's driver connection.

package duckload

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/duckdb/duckdb-go/v2/mapping"
)

// duckdb-go's Appender only takes rows as []driver.Value, which boxes every
// value; appending whole data chunks needs the C API (package mapping) and
// the connection's C handle, which *duckdb.Conn keeps in its unexported first
// field. connLayoutOK checks that layout once, so a duckdb-go upgrade that
// changes it makes NewAppenderSink fail instead of misbehaving.
var connLayoutOK = func() bool {
	f, ok := reflect.TypeFor[duckdb.Conn]().FieldByName("conn")
	return ok && f.Offset == 0 && f.Type == reflect.TypeFor[mapping.Connection]()
}()

func rawConnection(c driver.Conn) (mapping.Connection, error) {
	dc, ok := c.(*duckdb.Conn)
	if !ok {
		return mapping.Connection{}, fmt.Errorf("not a duckdb-go connection: %T", c)
	}
	if !connLayoutOK {
		return mapping.Connection{}, errors.New("duckdb-go's Conn layout changed; duckload needs updating")
	}
	h := *(*mapping.Connection)(unsafe.Pointer(dc))
	if h.Ptr == nil {
		return mapping.Connection{}, errors.New("duckdb connection is closed")
	}
	return h, nil
}
