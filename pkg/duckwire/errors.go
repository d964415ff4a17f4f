// Errors: the SQLSTATE each failure is reported with.

package duckwire

import (
	"context"
	"errors"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// SQLSTATE codes of refusals and query failures.
const (
	codeReadOnly        = "25006" // read_only_sql_transaction
	codeInFailedTx      = "25P02"
	codeNotSupported    = "0A000"
	codeSyntax          = "42601"
	codeUndefinedTable  = "42P01"
	codeUndefinedColumn = "42703"
	codeUndefinedObject = "42704"
	codeDatatype        = "42804"
	codeInvalidText     = "22P02"
	codeDivByZero       = "22012"
	codeOutOfRange      = "22003"
	codeInvalidParam    = "22023"
	codeQueryCanceled   = "57014"
	codeProtocol        = "08P01"
	codeUndefinedPStmt  = "26000"
	codeUndefinedCursor = "34000"
	codeDuplicatePStmt  = "42P05"
	codeInternal        = "XX000"
	codeInsufficientRes = "53000"
	codePermission      = "42501"
)

var errStatementTimeout = errors.New("canceling statement due to statement timeout")

// sqlError is a failure with its SQLSTATE, shown to the client as is.
type sqlError struct {
	code, msg string
}

func (e *sqlError) Error() string    { return e.msg }
func (e *sqlError) SQLState() string { return e.code }

func errorf(code, msg string) error { return &sqlError{code: code, msg: msg} }

// sqlState picks the SQLSTATE and message for err: ours, the dialect's
// (any error with a SQLState method), or DuckDB's by its error type.
func sqlState(err error) (string, string) {
	if errors.Is(err, errStatementTimeout) {
		return codeQueryCanceled, errStatementTimeout.Error()
	}
	if errors.Is(err, context.Canceled) {
		return codeQueryCanceled, "canceling statement due to user request"
	}
	var st interface{ SQLState() string }
	if errors.As(err, &st) {
		return st.SQLState(), err.Error()
	}
	var de *duckdb.Error
	if errors.As(err, &de) {
		if de.Type == duckdb.ErrorTypeInvalidInput {
			// The dialect's raise() (DuckDB's error()) comes back as
			// invalid input: its messages name PostgreSQL's own errors.
			for _, r := range raisedCodes {
				if strings.Contains(de.Msg, r.msg) {
					return r.code, de.Msg
				}
			}
		}
		return duckCode(de.Type), de.Msg
	}
	return codeInternal, err.Error()
}

// raisedCodes are the SQLSTATEs of the errors pkg/duckdialect raises in
// place of PostgreSQL's, by a part of their message.
var raisedCodes = []struct{ msg, code string }{
	{"division by zero", "22012"},
	{"negative substring length not allowed", "22011"},
	{"field position must not be zero", "22023"},
	{"result out of range or undefined", "22003"},
	{"(double precision, integer) does not exist", "42883"},
	{"is not supported; cast to numeric", "0A000"},
}

func duckCode(t duckdb.ErrorType) string {
	switch t {
	case duckdb.ErrorTypeParser, duckdb.ErrorTypeSyntax:
		return codeSyntax
	case duckdb.ErrorTypeCatalog:
		return codeUndefinedTable
	case duckdb.ErrorTypeBinder:
		return codeUndefinedColumn
	case duckdb.ErrorTypeConversion, duckdb.ErrorTypeInvalidInput:
		return codeInvalidText
	case duckdb.ErrorTypeDivideByZero:
		return codeDivByZero
	case duckdb.ErrorTypeOutOfRange, duckdb.ErrorTypeDecimal:
		return codeOutOfRange
	case duckdb.ErrorTypeMismatchType, duckdb.ErrorTypeInvalidType:
		return codeDatatype
	case duckdb.ErrorTypeInterrupt:
		return codeQueryCanceled
	case duckdb.ErrorTypeNotImplemented:
		return codeNotSupported
	case duckdb.ErrorTypePermission:
		return codePermission
	case duckdb.ErrorTypeOutOfMemory:
		return codeInsufficientRes
	case duckdb.ErrorTypeParameterNotResolved, duckdb.ErrorTypeParameterNotAllowed:
		return "42P18" // indeterminate_datatype
	}
	return codeInternal
}
