// Refusal: the typed error every rejected statement comes back as.

package safesql

import "strconv"

// Refusal says why a statement was refused. It is the only error type
// Validate returns, so callers can hand Reason and Position to an agent
// that then rewrites its query.
type Refusal struct {
	// Reason is one short sentence an agent can act on.
	Reason string
	// Construct names what was refused: a node type ("InsertStmt"), a
	// function ("pg_catalog.pg_sleep"), or an input check ("nul byte",
	// "length", "nesting depth", "syntax", "empty", "multiple statements").
	Construct string
	// Position is the 0-based byte offset into the SQL text, or -1 when
	// no position is known.
	Position int
}

// Error returns one line: "refused at offset N: reason".
func (r *Refusal) Error() string {
	if r.Position < 0 {
		return "refused: " + r.Reason
	}
	return "refused at offset " + strconv.Itoa(r.Position) + ": " + r.Reason
}

func refuse(pos int, construct, reason string) *Refusal {
	return &Refusal{Reason: reason, Construct: construct, Position: pos}
}
