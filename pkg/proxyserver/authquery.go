// Auth query: users the auth file does not list are looked up on the server, as PgBouncer's auth_query does.

package proxyserver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/qpkit/qpkit/pkg/pgwire"
)

// DefaultAuthQuery is what runs when only an auth user is given: the
// secret as pg_authid stores it (SCRAM verifier or md5 hash), none for an
// expired role or one that cannot log in. It needs a superuser; give a
// SECURITY DEFINER function in auth_query otherwise.
const DefaultAuthQuery = `SELECT rolname, CASE WHEN rolvaliduntil < now() THEN NULL ELSE rolpassword END FROM pg_catalog.pg_authid WHERE rolname = $1 AND rolcanlogin`

// authQueryTimeout bounds one lookup, connecting included.
const authQueryTimeout = 5 * time.Second

// authQuery runs the query as the auth user, in the auth database or the
// client's, on a small pool per database kept for the process's life.
type authQuery struct {
	base     *pgxpool.Config
	query    string
	database string // "": the client's

	mu    sync.Mutex
	pools map[string]*pgxpool.Pool
}

// newAuthQuery prepares lookups against serverURL as user, with password
// (when not empty and the URL has none).
func newAuthQuery(serverURL, query, user, database, password string) (*authQuery, error) {
	base, err := pgxpool.ParseConfig(serverURL)
	if err != nil {
		return nil, fmt.Errorf("auth query: server url: %w", err)
	}
	base.ConnConfig.User = user
	if password != "" && base.ConnConfig.Password == "" {
		base.ConnConfig.Password = password
	}
	base.MaxConns = 2
	base.MinConns = 0
	base.MaxConnIdleTime = time.Minute
	// One round trip, no prepared statements left on the server.
	base.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	if query == "" {
		query = DefaultAuthQuery
	}
	return &authQuery{base: base, query: query, database: database, pools: map[string]*pgxpool.Pool{}}, nil
}

// lookup returns user's credential from the query's second column; no
// row or a NULL secret is pgwire.ErrUnknownUser (the client then fails
// like any wrong password).
func (a *authQuery) lookup(ctx context.Context, user, database string) (pgwire.Credential, error) {
	ctx, cancel := context.WithTimeout(ctx, authQueryTimeout)
	defer cancel()
	p, err := a.pool(database)
	if err != nil {
		return pgwire.Credential{}, err
	}
	rows, err := p.Query(ctx, a.query, user)
	if err != nil {
		return pgwire.Credential{}, fmt.Errorf("auth query: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return pgwire.Credential{}, fmt.Errorf("auth query: %w", err)
		}
		return pgwire.Credential{}, pgwire.ErrUnknownUser
	}
	vals := rows.RawValues()
	if len(vals) < 2 {
		return pgwire.Credential{}, errors.New("auth query: want two columns (user name, secret)")
	}
	if vals[1] == nil || len(vals[1]) == 0 {
		return pgwire.Credential{}, pgwire.ErrUnknownUser
	}
	return pgwire.SecretCredential(string(vals[1])), nil
}

// pool is the lookup pool for the client's database.
func (a *authQuery) pool(database string) (*pgxpool.Pool, error) {
	if a.database != "" {
		database = a.database
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if p := a.pools[database]; p != nil {
		return p, nil
	}
	cfg := a.base.Copy()
	cfg.ConnConfig.Database = database
	p, err := pgxpool.NewWithConfig(context.Background(), cfg) // connects lazily
	if err != nil {
		return nil, fmt.Errorf("auth query: %w", err)
	}
	a.pools[database] = p
	return p, nil
}

// close closes every lookup pool.
func (a *authQuery) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range a.pools {
		p.Close()
	}
	clear(a.pools)
}
