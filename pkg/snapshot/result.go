// What Run reports.

package snapshot

import "time"

// Result describes a finished snapshot.
type Result struct {
	Target     string
	TakenAt    time.Time // the source's time when the snapshot was taken
	SnapshotID string
	WALLSN     string // source WAL position at the snapshot
	Strategy   Strategy
	Readers    int // readers and writers actually used
	Writers    int
	Duration   time.Duration // the whole run, including checkpoint and rename
	Tables     []TableResult
	Checks     []TableCheck // with Options.Verify: one per table, all matching
}

// TableResult describes one copied table.
type TableResult struct {
	Schema, Name string
	Rows         int64
	Bytes        int64 // COPY BINARY bytes read from the source
	Pages        int64 // heap pages when the snapshot was taken
	Ranges       int   // ctid ranges it was split into
	Duration     time.Duration
}
