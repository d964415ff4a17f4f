// Exporting one PostgreSQL snapshot and importing it into every reader.

package snapshot

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/copybin"
)

// exported is a snapshot held open by the coordinator connection.
type exported struct {
	conn *pgx.Conn // nil when the snapshot was exported by someone else
	ID   string    // pg_export_snapshot() result
	LSN  string    // WAL position of the snapshot, for change data capture
	// TakenAt is the server's start time of the transaction holding it.
	TakenAt time.Time
}

// sessionSetup disables the timeouts that would kill a long copy or the
// coordinator's idle transaction, and pins the settings text output
// depends on (copybin.TextSettings: ISO dates, TimeZone UTC, shortest
// exact floats), so that col::text in the checksum, and in columns read
// as text, is what the decoder stores whatever the server's defaults.
// row_security off: a table whose row-level security would hide rows
// from the snapshot's role fails with 42501, as in pg_dump, rather than
// being copied in part (and verified in part too).
const sessionSetup = `SET statement_timeout = 0; SET idle_in_transaction_session_timeout = 0; SET lock_timeout = 0; SET row_security = off; ` + copybin.TextSettings

// exportSnapshot opens the coordinator transaction and exports its
// snapshot. The transaction must stay open until every reader has imported
// the snapshot (and, with Verify, until the source side is checksummed).
//
// The LSN is read in the same statement, so every change the snapshot sees
// lies below it; it serves "has the source moved since" and as the point
// change data capture starts from. It is not exact: a transaction whose
// commit record was written just before (e.g. still waiting for a
// synchronous standby) may be invisible to the snapshot yet lie below the
// LSN. Seam for an exact point: a logical replication slot created with
// CREATE_REPLICATION_SLOT ... (SNAPSHOT 'export') yields a snapshot name and
// the slot's consistent_point; a CDC component passes those as
// Options.SnapshotID and Options.SnapshotLSN, and Run imports that snapshot
// rather than exporting its own.
func exportSnapshot(ctx context.Context, cfg *pgx.ConnConfig) (*exported, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect coordinator: %w", err)
	}
	fail := func(err error) (*exported, error) {
		conn.Close(context.Background())
		return nil, err
	}
	if err := conn.PgConn().Exec(ctx, sessionSetup+"; BEGIN ISOLATION LEVEL REPEATABLE READ").Close(); err != nil {
		return fail(fmt.Errorf("begin coordinator transaction: %w", err))
	}
	e := &exported{conn: conn}
	// The insert position, not the write position: with synchronous_commit
	// off a commit's record can sit in WAL buffers, below the insert
	// position but above the write position, and "has the source moved"
	// must see it.
	err = conn.QueryRow(ctx, `SELECT pg_export_snapshot(),
		(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_insert_lsn() END)::text,
		now()`).Scan(&e.ID, &e.LSN, &e.TakenAt)
	if err != nil {
		return fail(fmt.Errorf("export snapshot: %w", err))
	}
	return e, nil
}

// end commits the coordinator transaction, releasing the exported snapshot
// (importers keep their own copies), and closes the connection.
func (e *exported) end(ctx context.Context) {
	if e.conn == nil {
		return
	}
	e.conn.PgConn().Exec(ctx, "COMMIT").Close()
	e.conn.Close(ctx)
	e.conn = nil
}

// snapshotIDPattern is the shape of an exported snapshot name; checking it
// keeps the name safe to put in SET TRANSACTION SNAPSHOT's literal.
var snapshotIDPattern = regexp.MustCompile(`^[0-9A-Fa-f]+-[0-9A-Fa-f]+(-[0-9]+)?$`)

// importSnapshot connects and starts a read-only REPEATABLE READ
// transaction that sees exactly the exported snapshot id.
func importSnapshot(ctx context.Context, cfg *pgx.ConnConfig, id string) (*pgx.Conn, error) {
	if !snapshotIDPattern.MatchString(id) {
		return nil, fmt.Errorf("malformed snapshot id %q", id)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect reader: %w", err)
	}
	q := sessionSetup + "; BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '" + id + "'"
	if err := conn.PgConn().Exec(ctx, q).Close(); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("import snapshot %s: %w", id, err)
	}
	return conn, nil
}
