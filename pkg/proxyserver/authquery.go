// Auth query: users the auth file does not list are looked up on the server, as PgBouncer's auth_query does.

package proxyserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/qpkit/qpkit/pkg/pgwire"
	"github.com/qpkit/qpkit/pkg/route"
)

// DefaultAuthQuery is what runs when only an auth user is given: the
// secret as pg_authid stores it (SCRAM verifier or md5 hash), none for an
// expired role or one that cannot log in. It needs a superuser; give a
// SECURITY DEFINER function in auth_query otherwise.
const DefaultAuthQuery = `SELECT rolname, CASE WHEN rolvaliduntil < now() THEN NULL ELSE rolpassword END FROM pg_catalog.pg_authid WHERE rolname = $1 AND rolcanlogin`

// authQueryTimeout bounds one lookup, connecting included.
const authQueryTimeout = 5 * time.Second

// authQuery runs the query as the auth user, in the auth database or the
// client's, on that database's server (its target), on a small pool per
// database kept for the process's life.
type authQuery struct {
	targets  *route.Targets
	query    string
	user     string
	password string // the auth file's plaintext for user, used when the target's URL has none
	database string // "": the client's

	mu    sync.Mutex
	pools map[string]*pgxpool.Pool
}

// newAuthQuery prepares lookups as user on the servers of targets, with
// password when a target's URL gives none.
func newAuthQuery(targets *route.Targets, query, user, database, password string) *authQuery {
	if query == "" {
		query = DefaultAuthQuery
	}
	return &authQuery{targets: targets, query: query, user: user, password: password, database: database, pools: map[string]*pgxpool.Pool{}}
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
	tg, err := a.targets.For(database)
	if err != nil {
		return nil, fmt.Errorf("auth query: %w", err)
	}
	cfg, err := pgxpool.ParseConfig(tg.URL)
	if err != nil {
		return nil, fmt.Errorf("auth query: server url: %w", err)
	}
	cfg.ConnConfig.Database = cmp.Or(tg.Database, database)
	cfg.ConnConfig.User = a.user
	if cfg.ConnConfig.Password == "" {
		cfg.ConnConfig.Password = a.password
	}
	cfg.MaxConns = 2
	cfg.MinConns = 0
	cfg.MaxConnIdleTime = time.Minute
	// One round trip, no prepared statements left on the server.
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
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
