package pgexec

import (
	"errors"
	"time"
)

// ErrFailedAtOnce marks (errors.Is) a call's error that came within
// quickFail of sending the call: a pooled connection the server had
// dropped while it sat idle (a restart) fails so, with the server's
// goodbye already waiting in the socket. The server cannot tell a caller
// whether it began the statement: PostgreSQL answers a pg_terminate_backend
// during a statement with the same 57P01 as a shutdown, and flushes
// nothing of a call before its end. So a caller that runs a call again
// after its connection failed (mcpg, after a restart) does so only for
// these, never for a statement an operator killed while it ran.
var ErrFailedAtOnce = errors.New("pgexec: the call failed as soon as it was sent")

// quickFail is how soon after sending a call's failure counts as
// ErrFailedAtOnce: a dropped connection answers within a round trip; a
// running statement an operator kills has run longer than this.
const quickFail = 20 * time.Millisecond

type failedAtOnce struct{ error }

func (e *failedAtOnce) Unwrap() error        { return e.error }
func (e *failedAtOnce) Is(target error) bool { return target == ErrFailedAtOnce }
