// The JSON-lines records qpanalytics prints for a snapshot and a verify
// (docs/formats.md, "qpanalytics records").

package snapshot

import "time"

// Record is the stdout summary line of a finished snapshot.
type Record struct {
	Type       string        `json:"type"`
	Version    int           `json:"version"`
	Target     string        `json:"target"`
	TakenAt    time.Time     `json:"taken_at"`
	SnapshotID string        `json:"snapshot_id"`
	WALLSN     string        `json:"wal_lsn"`
	Strategy   string        `json:"strategy"`
	Readers    int           `json:"readers"`
	Writers    int           `json:"writers"`
	DurNS      int64         `json:"dur_ns"`
	Tables     []TableRecord `json:"tables"`
	Verified   bool          `json:"verified"`
}

// TableRecord is one table of a Record.
type TableRecord struct {
	Table  string `json:"table"`
	Rows   int64  `json:"rows"`
	Bytes  int64  `json:"bytes"`
	Pages  int64  `json:"pages"`
	Ranges int    `json:"ranges"`
	DurNS  int64  `json:"dur_ns"`
}

// Record is r as its stdout line; verified says Options.Verify ran.
func (r *Result) Record(verified bool) Record {
	rec := Record{Type: "snapshot", Version: 1, Target: r.Target, TakenAt: r.TakenAt.UTC(),
		SnapshotID: r.SnapshotID, WALLSN: r.WALLSN, Strategy: string(r.Strategy),
		Readers: r.Readers, Writers: r.Writers, DurNS: r.Duration.Nanoseconds(), Verified: verified}
	for _, t := range r.Tables {
		rec.Tables = append(rec.Tables, TableRecord{Table: t.Schema + "." + t.Name, Rows: t.Rows, Bytes: t.Bytes,
			Pages: t.Pages, Ranges: t.Ranges, DurNS: t.Duration.Nanoseconds()})
	}
	return rec
}

// VerifyRecord is one stdout line of verify, per checked table.
type VerifyRecord struct {
	Type        string `json:"type"`
	Version     int    `json:"version"`
	Table       string `json:"table"`
	Match       bool   `json:"match"`
	SourceRows  int64  `json:"source_rows"`
	CopyRows    int64  `json:"copy_rows"`
	SourceSum   string `json:"source_checksum"`
	CopySum     string `json:"copy_checksum"`
	SourceMoved bool   `json:"source_moved"`
	Note        string `json:"note,omitempty"`
}

// Record is c as its stdout line.
func (c TableCheck) Record() VerifyRecord {
	return VerifyRecord{Type: "verify", Version: 1, Table: c.Schema + "." + c.Name, Match: c.Match,
		SourceRows: c.SourceRows, CopyRows: c.CopyRows, SourceSum: c.SourceSum, CopySum: c.CopySum,
		SourceMoved: c.SourceMoved, Note: c.Note}
}
