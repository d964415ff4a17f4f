// Typed errors, so that the wire server can answer with the right SQLSTATE.

package duckdialect

import "fmt"

// UnsupportedError reports a construct Translate cannot translate
// faithfully. The server sends it as SQLSTATE 0A000 (feature_not_supported).
type UnsupportedError struct {
	// Feature names the construct, e.g. "function pg_sleep" or "SIMILAR TO".
	Feature string
}

func (e *UnsupportedError) Error() string {
	return "qpanalytics does not support " + e.Feature
}

// SQLState is PostgreSQL's feature_not_supported.
func (e *UnsupportedError) SQLState() string { return "0A000" }

// unsupported builds an *UnsupportedError from a format.
func unsupported(format string, args ...any) error {
	return &UnsupportedError{Feature: fmt.Sprintf(format, args...)}
}

// SyntaxError reports a statement PostgreSQL's parser rejects.
type SyntaxError struct {
	Message string
	// Position is the 1-based character position of the error, 0 if unknown.
	Position int
}

func (e *SyntaxError) Error() string { return "syntax error: " + e.Message }

// SQLState is PostgreSQL's syntax_error.
func (e *SyntaxError) SQLState() string { return "42601" }
