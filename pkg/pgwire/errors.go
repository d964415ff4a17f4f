// Errors: the ErrorResponses Accept sends and the *Error it returns for each.

package pgwire

import (
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgproto3"
)

// SQLSTATE codes Accept reports.
const (
	CodeProtocolViolation     = "08P01"
	CodeFeatureNotSupported   = "0A000"
	CodeInvalidAuthorization  = "28000" // invalid_authorization_specification
	CodeInvalidPassword       = "28P01"
	CodeInternalError         = "XX000"
	CodeConnectionFailure     = "08006"
	CodeTooManyConnections    = "53300"
	CodeCannotConnectNow      = "57P03"
	CodeAdminShutdown         = "57P01"
	CodeQueryCanceled         = "57014"
	CodeInvalidParameterValue = "22023"
)

// Error is a refusal Accept reported to the client as an ErrorResponse
// (when the connection still allowed it). Code is the SQLSTATE; Err, when
// set, is the underlying cause, not shown to the client.
type Error struct {
	Severity string // "FATAL" for every startup error
	Code     string
	Message  string
	Hint     string // the H field; "" for none
	Err      error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("pgwire: %s (SQLSTATE %s)", e.Message, e.Code)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// ErrUnknownUser is what a ServerConfig.Credentials function returns for a
// user it does not know. Accept then runs a mock exchange (the Method of the
// returned Credential, SCRAM when unset) that always fails with the same
// message as a wrong password.
var ErrUnknownUser = errors.New("pgwire: unknown user")

// IsAuthFailure reports whether err is a failed password check (wrong
// password, unknown user, or a user whose secret cannot serve the method).
func IsAuthFailure(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeInvalidPassword
}

// WriteError writes one ErrorResponse with the given severity ("FATAL",
// "ERROR"), SQLSTATE code and message.
func WriteError(w io.Writer, severity, code, message string) error {
	msg := &pgproto3.ErrorResponse{Severity: severity, SeverityUnlocalized: severity, Code: code, Message: message}
	buf, err := msg.Encode(nil)
	if err != nil {
		return err
	}
	_, err = w.Write(buf)
	return err
}

func fatal(code, format string, args ...any) *Error {
	return &Error{Severity: "FATAL", Code: code, Message: fmt.Sprintf(format, args...)}
}
