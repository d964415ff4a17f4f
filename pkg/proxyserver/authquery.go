// Auth query: users the auth file does not list are looked up on the server, as PgBouncer's auth_query does.

package proxyserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
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
// (auth user, database), the most recently used maxAuthPools of them. A database's target
// may name its own auth user, query and database (PgBouncer's
// per-database auth_user, auth_query, auth_dbname).
type authQuery struct {
	targets *route.Targets
	// settings are the top-level query ("": DefaultAuthQuery), user ("":
	// only databases whose target names one look users up) and database
	// ("": the client's), as the latest reload left them.
	settings func() (query, user, database string)
	password func(user string) string // the auth file's plaintext, used when the target's URL has none

	mu    sync.Mutex
	pools *simplelru.LRU[[2]string, *pgxpool.Pool]
}

// maxAuthPools bounds the lookup pools kept: the database of a lookup is
// the client's choice before it has logged in, so each name must not
// cost a pool for the life of the process. The least recently used one
// closes when another is needed.
const maxAuthPools = 32

// newAuthPools is an empty set of lookup pools; evicted ones close once
// the lookups that already have them are done (they end within
// authQueryTimeout).
func newAuthPools() *simplelru.LRU[[2]string, *pgxpool.Pool] {
	l, _ := simplelru.NewLRU(maxAuthPools, func(_ [2]string, p *pgxpool.Pool) { closeLater(p) })
	return l
}

// closeLater closes a lookup pool once lookups under way on it are over.
func closeLater(p *pgxpool.Pool) {
	time.AfterFunc(authQueryTimeout+time.Second, p.Close)
}

// newAuthQuery prepares lookups as the settings' user (or a target's auth
// user) on the servers of targets.
func newAuthQuery(targets *route.Targets, settings func() (query, user, database string), password func(string) string) *authQuery {
	return &authQuery{targets: targets, settings: settings, password: password, pools: newAuthPools()}
}

// lookup returns user's credential from the query's second column; no
// row or a NULL secret is pgwire.ErrUnknownUser (the client then fails
// like any wrong password), as is a database with no auth user.
func (a *authQuery) lookup(ctx context.Context, user, database string) (pgwire.Credential, error) {
	ctx, cancel := context.WithTimeout(ctx, authQueryTimeout)
	defer cancel()
	tg, err := a.targets.For(database)
	if err != nil {
		return pgwire.Credential{}, pgwire.ErrUnknownUser
	}
	query, au, authDB := a.settings()
	query, authDB = cmp.Or(query, DefaultAuthQuery), cmp.Or(authDB, database)
	if tg.AuthUser != "" {
		au, query, authDB = tg.AuthUser, cmp.Or(tg.AuthQuery, query), cmp.Or(tg.AuthDatabase, authDB)
	}
	if au == "" {
		return pgwire.Credential{}, pgwire.ErrUnknownUser
	}
	p, err := a.pool(au, authDB)
	if err != nil {
		return pgwire.Credential{}, err
	}
	rows, err := p.Query(ctx, query, user)
	if err != nil {
		// No server, no such database, a refused auth user: the pool is
		// of no use until that changes, and the next lookup opens a new one.
		a.drop(au, authDB, p)
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

// pool is the lookup pool of an auth user in a database.
func (a *authQuery) pool(user, database string) (*pgxpool.Pool, error) {
	key := [2]string{user, database}
	a.mu.Lock()
	defer a.mu.Unlock()
	if p, ok := a.pools.Get(key); ok {
		return p, nil
	}
	tg, err := a.targets.For(database)
	if err != nil {
		return nil, fmt.Errorf("auth query: %w", err)
	}
	cfg, err := pgxpool.ParseConfig(tg.Conn)
	if err != nil {
		return nil, fmt.Errorf("auth query: server url: %w", err)
	}
	cfg.ConnConfig.Database = cmp.Or(tg.Database, database)
	if tg.User != "" && tg.User != user {
		cfg.ConnConfig.Password = "" // the forced user's, not the auth user's
	}
	cfg.ConnConfig.User = user
	if cfg.ConnConfig.Password == "" && a.password != nil {
		cfg.ConnConfig.Password = a.password(user)
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
	a.pools.Add(key, p)
	return p, nil
}

// drop closes p, the lookup pool of user in database, unless another
// lookup has replaced it meanwhile.
func (a *authQuery) drop(user, database string, p *pgxpool.Pool) {
	key := [2]string{user, database}
	a.mu.Lock()
	defer a.mu.Unlock()
	if cur, ok := a.pools.Peek(key); ok && cur == p {
		a.pools.Remove(key) // closes it
	}
}

// close closes every lookup pool.
func (a *authQuery) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range a.pools.Values() {
		p.Close()
	}
	a.pools = newAuthPools()
}

// forget drops every lookup pool (after a reload moved a database to
// another server): the next lookups open new ones. The old ones close in
// the background once their lookups under way are done.
func (a *authQuery) forget() {
	a.mu.Lock()
	old := a.pools
	a.pools = newAuthPools()
	a.mu.Unlock()
	old.Purge() // closes them once their lookups under way are done
}
