// Per-pool settings: the [pools."database/user"] tables of the config file, layered over the top-level settings.

package proxyserver

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/qpkit/qpkit/pkg/pool"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// PoolSettings override the top-level pool settings for the pools a key of
// Config.Pools names: "database" (every user of it), "*/user" (every
// database of that user) or "database/user". A nil field leaves the value
// to a less specific key or to the top-level setting. The most specific
// key wins field by field: database/user, then */user, then database (the
// order in which PgBouncer lets a user's pool_mode override a database's).
type PoolSettings struct {
	PoolMode           *string        `toml:"pool_mode"`
	PoolSize           *int           `toml:"pool_size"`
	MinIdle            *int           `toml:"min_idle"`
	MaxPoolClients     *int           `toml:"max_pool_clients"`
	AcquireTimeout     *time.Duration `toml:"acquire_timeout"`
	IdleTimeout        *time.Duration `toml:"idle_timeout"`
	MaxLifetime        *time.Duration `toml:"max_lifetime"`
	HealthCheckAfter   *time.Duration `toml:"health_check_after"`
	ResetQuery         *string        `toml:"reset_query"`
	ReservePoolSize    *int           `toml:"reserve_pool_size"`
	ReservePoolTimeout *time.Duration `toml:"reserve_pool_timeout"`
	// MaxDBConnections is taken from "database" keys only, and
	// MaxUserConnections from "*/user" keys only: each caps all the pools
	// of its database or user together.
	MaxDBConnections   *int `toml:"max_db_connections"`
	MaxUserConnections *int `toml:"max_user_connections"`
	// MaxDBClients and MaxUserClients cap clients the same way: "database"
	// and "*/user" keys only.
	MaxDBClients   *int `toml:"max_db_client_connections"`
	MaxUserClients *int `toml:"max_user_client_connections"`
}

// poolValues are the settings one pool ends up with.
type poolValues struct {
	mode                                                  string
	size, minIdle, maxClients                             int
	acquireTimeout, idleTimeout, maxLifetime, healthCheck time.Duration
	resetQuery                                            string
	reserve, maxDB, maxUser                               int
	maxDBClients, maxUserClients                          int
	reserveTimeout                                        time.Duration
	roundRobin                                            bool // server_round_robin, top-level only
}

// over applies o's set fields to v.
func (v *poolValues) over(o PoolSettings) {
	set := func(dst *int, src *int) {
		if src != nil {
			*dst = *src
		}
	}
	setD := func(dst *time.Duration, src *time.Duration) {
		if src != nil {
			*dst = *src
		}
	}
	if o.PoolMode != nil {
		v.mode = *o.PoolMode
	}
	set(&v.size, o.PoolSize)
	set(&v.minIdle, o.MinIdle)
	set(&v.maxClients, o.MaxPoolClients)
	setD(&v.acquireTimeout, o.AcquireTimeout)
	setD(&v.idleTimeout, o.IdleTimeout)
	setD(&v.maxLifetime, o.MaxLifetime)
	setD(&v.healthCheck, o.HealthCheckAfter)
	if o.ResetQuery != nil {
		v.resetQuery = *o.ResetQuery
	}
	set(&v.reserve, o.ReservePoolSize)
	setD(&v.reserveTimeout, o.ReservePoolTimeout)
	set(&v.maxDB, o.MaxDBConnections)
	set(&v.maxUser, o.MaxUserConnections)
	set(&v.maxDBClients, o.MaxDBClients)
	set(&v.maxUserClients, o.MaxUserClients)
}

// poolFor is the settings of the pool of (database, user).
func (c *Config) poolFor(database, user string) poolValues {
	v := poolValues{mode: c.PoolMode, size: c.PoolSize, minIdle: c.MinIdle, maxClients: c.MaxPoolClients,
		acquireTimeout: c.AcquireTimeout, idleTimeout: c.IdleTimeout, maxLifetime: c.MaxLifetime,
		healthCheck: c.HealthCheckAfter, resetQuery: c.ResetQuery,
		reserve: c.ReservePoolSize, reserveTimeout: c.ReservePoolTimeout, maxDB: c.MaxDBConnections, maxUser: c.MaxUserConnections,
		maxDBClients: c.MaxDBClients, maxUserClients: c.MaxUserClients, roundRobin: c.ServerRoundRobin}
	if len(c.Pools) == 0 {
		return v.capMinIdle()
	}
	for _, key := range []string{database, "*/" + user, database + "/" + user} {
		if o, ok := c.Pools[key]; ok {
			v.over(o)
		}
	}
	return v.capMinIdle()
}

// capMinIdle caps min_idle at the pool's size, as PgBouncer caps
// min_pool_size ("effectively capped at the pool size"): a pgbouncer.ini
// PgBouncer takes, with a min_pool_size above some pool's size, works.
func (v poolValues) capMinIdle() poolValues {
	v.minIdle = min(v.minIdle, v.size)
	return v
}

func (v poolValues) config() pool.Config {
	return pool.Config{Size: v.size, MinIdle: v.minIdle, MaxClients: v.maxClients,
		AcquireTimeout: v.acquireTimeout, IdleTimeout: v.idleTimeout, MaxLifetime: v.maxLifetime,
		HealthCheckAfter: v.healthCheck, ResetQuery: v.resetQuery,
		ReservePool: v.reserve, ReserveTimeout: v.reserveTimeout, MaxDBConnections: v.maxDB, MaxUserConnections: v.maxUser,
		RoundRobin: v.roundRobin}
}

// modesChanged reports whether a and b differ in a pool mode.
func modesChanged(a, b Config) bool {
	if a.PoolMode != b.PoolMode {
		return true
	}
	mode := func(o PoolSettings) string {
		if o.PoolMode == nil {
			return ""
		}
		return *o.PoolMode
	}
	for k, o := range a.Pools {
		if mode(o) != mode(b.Pools[k]) {
			return true
		}
	}
	for k, o := range b.Pools {
		if mode(o) != mode(a.Pools[k]) {
			return true
		}
	}
	return false
}

// modeFor is the pool mode of the clients of (database, user).
func (c *Config) modeFor(database, user string) proxy.Mode {
	m, _ := proxy.ParseMode(c.poolFor(database, user).mode)
	return m
}

// anyTransaction reports whether some pool may run in transaction (or
// statement) mode.
func (c *Config) anyTransaction() bool {
	if c.mode().PerTransaction() {
		return true
	}
	for _, o := range c.Pools {
		if o.PoolMode != nil && (*o.PoolMode == "transaction" || *o.PoolMode == "statement") {
			return true
		}
	}
	return false
}

// checkPools refuses a malformed key or a bad value in Pools, naming the
// keys, for every combination a client can meet: each database key, each
// */user key, and each pair of them (with its database/user key if any).
func (c *Config) checkPools() error {
	const none = "\x00" // a name no key has
	dbs, users := []string{none}, []string{none}
	keys := make([]string, 0, len(c.Pools))
	for k := range c.Pools {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		db, user, err := splitPoolKey(k)
		if err != nil {
			return err
		}
		o := c.Pools[k]
		for _, c := range []struct {
			key    string
			set, u bool // set in this table; u: a per-user cap
		}{{"max_db_connections", o.MaxDBConnections != nil, false}, {"max_user_connections", o.MaxUserConnections != nil, true},
			{"max_db_client_connections", o.MaxDBClients != nil, false}, {"max_user_client_connections", o.MaxUserClients != nil, true}} {
			switch {
			case c.set && !c.u && (db == "*" || user != ""):
				return fmt.Errorf("pools.%q: %s caps a whole database: set it in a [pools.%q] table", k, c.key, db)
			case c.set && c.u && db != "*":
				return fmt.Errorf("pools.%q: %s caps all of a user's pools: set it in a [pools.%q] table", k, c.key, "*/"+cmp.Or(user, "user"))
			}
		}
		if db != "*" && !slices.Contains(dbs, db) {
			dbs = append(dbs, db)
		}
		if user != "" && !slices.Contains(users, user) {
			users = append(users, user)
		}
	}
	for _, db := range dbs {
		for _, user := range users {
			var at []string
			for _, k := range []string{db, "*/" + user, db + "/" + user} {
				if _, ok := c.Pools[k]; ok {
					at = append(at, fmt.Sprintf("pools.%q", k))
				}
			}
			if len(at) == 0 {
				continue
			}
			if err := c.poolFor(db, user).check(); err != nil {
				return fmt.Errorf("%s: %w", strings.Join(at, " over "), err)
			}
		}
	}
	return nil
}

// check refuses the values a pool cannot run with.
func (v poolValues) check() error {
	if _, err := proxy.ParseMode(v.mode); err != nil {
		return err
	}
	if v.size < 1 {
		return fmt.Errorf("pool_size %d: want at least 1", v.size)
	}
	if v.minIdle < 0 {
		return fmt.Errorf("min_idle %d: want 0 or more", v.minIdle)
	}
	if v.maxClients < 0 {
		return fmt.Errorf("max_pool_clients %d: want 0 (no limit) or more", v.maxClients)
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"acquire_timeout", v.acquireTimeout}, {"idle_timeout", v.idleTimeout}, {"max_lifetime", v.maxLifetime},
		{"health_check_after", v.healthCheck}, {"reserve_pool_timeout", v.reserveTimeout}} {
		if d.v <= 0 {
			return fmt.Errorf("%s %s: want more than 0", d.key, d.v)
		}
	}
	for _, n := range []struct {
		key string
		v   int
	}{{"reserve_pool_size", v.reserve}, {"max_db_connections", v.maxDB}, {"max_user_connections", v.maxUser},
		{"max_db_client_connections", v.maxDBClients}, {"max_user_client_connections", v.maxUserClients}} {
		if n.v < 0 {
			return fmt.Errorf("%s %d: want 0 or more", n.key, n.v)
		}
	}
	return nil
}

// splitPoolKey reads "database" (user ""), "database/user" or "*/user".
func splitPoolKey(k string) (db, user string, err error) {
	db, user, slash := strings.Cut(k, "/")
	if db == "" || (slash && (user == "" || user == "*")) || (!slash && db == "*") {
		return "", "", fmt.Errorf("pools.%q: want \"database\", \"database/user\" or \"*/user\"", k)
	}
	return db, user, nil
}
