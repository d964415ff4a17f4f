// The start-up role check: is the connecting role more powerful than a
// read-only server should be?

package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// RiskyRoles are the predefined roles that reach beyond the database: they
// read or write the server's files or run programs on it.
var RiskyRoles = []string{"pg_read_server_files", "pg_write_server_files", "pg_execute_server_program"}

// Role is what CheckRole found out about the connecting role.
type Role struct {
	Name      string
	Superuser bool
	// Risky are the RiskyRoles the role is a member of (a superuser is a
	// member of all of them).
	Risky []string
	// ServerVersion is the server's server_version_num.
	ServerVersion int
}

// Dangerous reports whether the role is a superuser or in a RiskyRoles role.
func (r Role) Dangerous() bool { return r.Superuser || len(r.Risky) > 0 }

// Problem says in one line why the role is dangerous; "" when it is not.
func (r Role) Problem() string {
	switch {
	case r.Superuser:
		return fmt.Sprintf("role %q is a superuser: the read-only guards are all that stands between the agent and the server", r.Name)
	case len(r.Risky) > 0:
		return fmt.Sprintf("role %q is a member of %s, which reach the server's files or programs", r.Name, strings.Join(r.Risky, ", "))
	}
	return ""
}

const roleSQL = `SELECT current_user::text, r.rolsuper,
  ARRAY(SELECT g FROM unnest($1::text[]) g WHERE pg_has_role(current_user, g, 'MEMBER') ORDER BY g),
  pg_catalog.current_setting('server_version_num')::int
FROM pg_catalog.pg_roles r WHERE r.rolname = current_user`

// CheckRole looks up the role pool connects as. It runs constant SQL on
// the pool directly, not through the validator.
func CheckRole(ctx context.Context, pool *pgxpool.Pool) (Role, error) {
	var r Role
	err := pool.QueryRow(ctx, roleSQL, RiskyRoles).Scan(&r.Name, &r.Superuser, &r.Risky, &r.ServerVersion)
	if err != nil {
		return Role{}, fmt.Errorf("check role: %w", err)
	}
	return r, nil
}
