// The snapshot's description stored inside the DuckDB file.

package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// MetaSchema is the DuckDB schema holding the snapshot's metadata.
const MetaSchema = "_qpanalytics"

// Meta describes the snapshot a DuckDB file holds.
type Meta struct {
	TakenAt    time.Time // the source's time when the snapshot was taken
	SourceHost string    // host (or socket directory) and port, no credentials
	SourceDB   string
	SnapshotID string // the exported snapshot's id
	WALLSN     string // source WAL position at the snapshot, e.g. "0/16B3748"
	Strategy   Strategy
	Readers    int
	Writers    int
	Duration   time.Duration // whole copy, up to writing this metadata
	Tables     []TableMeta
}

// TableMeta describes one copied table.
type TableMeta struct {
	Schema, Name string
	Rows         int64
	Bytes        int64 // COPY BINARY bytes read from the source
	SourcePages  int64 // heap pages when the snapshot was taken
	Duration     time.Duration
}

const metaDDL = `
CREATE SCHEMA ` + MetaSchema + `;
CREATE TABLE ` + MetaSchema + `.snapshot (
	taken_at TIMESTAMPTZ NOT NULL, source_host VARCHAR NOT NULL, source_db VARCHAR NOT NULL,
	snapshot_id VARCHAR NOT NULL, wal_lsn VARCHAR NOT NULL, strategy VARCHAR NOT NULL,
	readers INTEGER NOT NULL, writers INTEGER NOT NULL, duration_us BIGINT NOT NULL);
CREATE TABLE ` + MetaSchema + `.tables (
	schema_name VARCHAR NOT NULL, table_name VARCHAR NOT NULL, "rows" BIGINT NOT NULL,
	bytes BIGINT NOT NULL, source_pages BIGINT NOT NULL, duration_us BIGINT NOT NULL,
	PRIMARY KEY (schema_name, table_name))`

// writeMeta stores m in db, which must not have the schema yet.
func writeMeta(ctx context.Context, db *sql.DB, m *Meta) error {
	if _, err := db.ExecContext(ctx, metaDDL); err != nil {
		return fmt.Errorf("create metadata tables: %w", err)
	}
	_, err := db.ExecContext(ctx, `INSERT INTO `+MetaSchema+`.snapshot VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		m.TakenAt, m.SourceHost, m.SourceDB, m.SnapshotID, m.WALLSN, string(m.Strategy), m.Readers, m.Writers, m.Duration.Microseconds())
	if err != nil {
		return fmt.Errorf("write snapshot metadata: %w", err)
	}
	for _, t := range m.Tables {
		_, err := db.ExecContext(ctx, `INSERT INTO `+MetaSchema+`.tables VALUES ($1, $2, $3, $4, $5, $6)`,
			t.Schema, t.Name, t.Rows, t.Bytes, t.SourcePages, t.Duration.Microseconds())
		if err != nil {
			return fmt.Errorf("write metadata of %s.%s: %w", t.Schema, t.Name, err)
		}
	}
	return nil
}

// ReadMeta reads the description of the snapshot held by a DuckDB file
// written by Run, e.g. for the server's snapshot age and size metrics.
func ReadMeta(ctx context.Context, db *sql.DB) (*Meta, error) {
	m := &Meta{}
	var strategy string
	var durUS int64
	err := db.QueryRowContext(ctx, `SELECT taken_at, source_host, source_db, snapshot_id, wal_lsn, strategy, readers, writers, duration_us
		FROM `+MetaSchema+`.snapshot`).Scan(&m.TakenAt, &m.SourceHost, &m.SourceDB, &m.SnapshotID, &m.WALLSN, &strategy, &m.Readers, &m.Writers, &durUS)
	if err != nil {
		return nil, fmt.Errorf("read snapshot metadata (is this a qpanalytics snapshot?): %w", err)
	}
	m.Strategy, m.Duration = Strategy(strategy), time.Duration(durUS)*time.Microsecond
	rows, err := db.QueryContext(ctx, `SELECT schema_name, table_name, "rows", bytes, source_pages, duration_us
		FROM `+MetaSchema+`.tables ORDER BY schema_name, table_name`)
	if err != nil {
		return nil, fmt.Errorf("read table metadata: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t TableMeta
		if err := rows.Scan(&t.Schema, &t.Name, &t.Rows, &t.Bytes, &t.SourcePages, &durUS); err != nil {
			return nil, fmt.Errorf("read table metadata: %w", err)
		}
		t.Duration = time.Duration(durUS) * time.Microsecond
		m.Tables = append(m.Tables, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read table metadata: %w", err)
	}
	return m, nil
}
