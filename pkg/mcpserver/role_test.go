package mcpserver

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgexec"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// roleURL creates role name (with extra grants) if needed and returns a
// URL connecting as it.
func roleURL(t *testing.T, name, grants string) string {
	t.Helper()
	db := pgtest.Shared(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP ROLE IF EXISTS `+name+`; CREATE ROLE `+name+` LOGIN; `+grants); err != nil {
		t.Fatal(err)
	}
	return strings.Replace(db.URL(), "postgres@", name+"@", 1)
}

func checkRoleAt(t *testing.T, url string) Role {
	t.Helper()
	pool, err := pgexec.NewPool(context.Background(), url, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	r, err := CheckRole(context.Background(), pool)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCheckRole(t *testing.T) {
	r := checkRoleAt(t, pgtest.Shared(t).URL())
	if r.Name != "postgres" || !r.Superuser || !r.Dangerous() || !strings.Contains(r.Problem(), "superuser") {
		t.Errorf("superuser: %+v %q", r, r.Problem())
	}
	r = checkRoleAt(t, roleURL(t, "mcpg_reader", `GRANT pg_read_all_data TO mcpg_reader`))
	if r.Name != "mcpg_reader" || r.Dangerous() || r.Problem() != "" || len(r.Risky) != 0 {
		t.Errorf("reader: %+v", r)
	}
	r = checkRoleAt(t, roleURL(t, "mcpg_files", `GRANT pg_read_server_files, pg_execute_server_program TO mcpg_files`))
	if r.Superuser || !slices.Equal(r.Risky, []string{"pg_execute_server_program", "pg_read_server_files"}) ||
		!strings.Contains(r.Problem(), "pg_execute_server_program, pg_read_server_files") {
		t.Errorf("files: %+v %q", r, r.Problem())
	}
}
