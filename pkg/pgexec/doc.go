// Package documentation: what the executor guarantees and where each guarantee is enforced.

// Package pgexec runs agent SQL that a Validator accepted, read-only, on a
// pgx pool connection.
//
// Every call sends one pipelined request: the agent's statement as an
// unnamed extended-protocol statement between BEGIN TRANSACTION READ ONLY
// plus SET LOCAL statement_timeout and ROLLBACK, with two Syncs, in a single
// write. The server runs the statement only if the envelope in front of it
// succeeded (after an error it discards messages up to the next Sync), the
// extended protocol refuses more than one statement per Parse, and the
// ROLLBACK after the first Sync always runs, so the connection goes back to
// the pool idle or is destroyed. docs/pgexec.md lists the message sequence,
// the guarantees and the tests that prove each one.
//
// Rows are fetched with the Execute message's row limit (MaxRows+1), never
// by rewriting the statement, and written straight from the wire's text
// values into a compact JSON or TSV document (Options.Format).
package pgexec
