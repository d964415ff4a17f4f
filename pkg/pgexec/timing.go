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
	// write, to the last message read (the second ReadyForQuery): server
	// execution, network, and reading the replies. Rows are serialized as
	// they arrive, while the server produces the next ones, so that work
	// happens inside DB (see SerializeOverlap); DB is therefore the
	// statement's wall time as the client sees it, the same span a plain
	// driver reading the same replies measures, and it grows only if the
	// client reads more slowly than the server sends.
	DB time.Duration
	// SerializeOverlap is the part of DB spent serializing rows between
	// socket reads (decoding the buffered messages and writing the
	// document; the clock is read once per read-buffer refill, not per
	// row). It is informational: it overlaps the server's work, so it is
	// not a segment of its own.
	SerializeOverlap time.Duration
	// Serialize is the client's work on the rows after the last message:
	// ending the document and building the result.
	Serialize time.Duration
	// Total is the whole call, from before validation to the end of
	// serialization.
	Total time.Duration
}
