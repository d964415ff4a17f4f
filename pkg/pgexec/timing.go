// Per-call timing, itemized by phase and measured with the monotonic clock.

package pgexec

import "time"

// Timing itemizes one call. Every field is a difference of two time.Now
// readings (monotonic clock), so recording it allocates nothing.
type Timing struct {
	// Parse is Validator.Validate plus the executor's own argument checks
	// (NUL bytes, parameter encoding).
	Parse time.Duration
	// Pool is the pool checkout (pgxpool Acquire, plus replacing a
	// connection found outside the idle state).
	Pool time.Duration
	// Txn is the read-only envelope's own cost. The envelope is pipelined
	// with the statement, so it adds no round trip: this is the client-side
	// work of putting the pre-encoded envelope messages into the send
	// buffer. The server's time for BEGIN, SET LOCAL and ROLLBACK is inside
	// DB and cannot be separated from it without extra round trips.
	Txn time.Duration
	// DB runs from encoding the statement's messages, through the single
	// write, to the last message read (the second ReadyForQuery), minus
	// Serialize: server execution, network, and waiting for and reading
	// from the socket.
	DB time.Duration
	// Serialize is the client's work on the rows. Rows are written to JSON
	// as they arrive, overlapping the server producing the next ones, so it
	// is measured as the time between socket reads while rows stream in
	// (decoding the buffered messages and writing JSON; the clock is read
	// once per read-buffer refill, not per row), plus ending the document.
	Serialize time.Duration
	// Total is the whole call, from before validation to the end of
	// serialization.
	Total time.Duration
}
