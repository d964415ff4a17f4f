// Checks before a run: the server must allow the sweep's connections.

package run

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// CheckConnections fails, naming max_connections, when the server cannot
// give the sweep need connections on top of those already open.
func CheckConnections(ctx context.Context, conn *pgx.Conn, need int) error {
	var max, reserved, used int
	err := conn.QueryRow(ctx, `SELECT current_setting('max_connections')::int,
		current_setting('superuser_reserved_connections')::int,
		(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int`).Scan(&max, &reserved, &used)
	if err != nil {
		return fmt.Errorf("reading max_connections: %w", err)
	}
	if free := max - reserved - used; free < need {
		return fmt.Errorf("the concurrency sweep needs %d connections but the server allows %d more "+
			"(max_connections=%d, superuser_reserved_connections=%d, %d in use): raise max_connections or lower --concurrency",
			need, free, max, reserved, used)
	}
	return nil
}
