// Settings of a proxy server, their checks, and the TOML file they are read from.

package proxyserver

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/qpkit/qpkit/pkg/cmdline"
	"github.com/qpkit/qpkit/pkg/proxy"
	"github.com/qpkit/qpkit/pkg/route"
)

// Config is every setting of a proxy server. The toml tags are the keys of
// the config file (and, dashes for underscores, qprouter's flag names);
// defaults come from the command line that fills it (see docs/qprouter.md).
type Config struct {
	Listen             string        `toml:"listen"`                      // address clients connect to
	UnixSocketDir      string        `toml:"unix_socket_dir"`             // also listen on DIR/.s.PGSQL.<port of listen> ("": TCP only)
	UnixSocketMode     string        `toml:"unix_socket_mode"`            // the socket file's permissions, octal
	UnixSocketGroup    string        `toml:"unix_socket_group"`           // the socket file's group, a name or number ("": the process's)
	ServerURL          string        `toml:"server_url"`                  // host, port, TLS and optionally a password; database and user come from each client
	PoolMode           string        `toml:"pool_mode"`                   // "session" or "transaction"
	PoolSize           int           `toml:"pool_size"`                   // server connections per (database, user) at most
	MinIdle            int           `toml:"min_idle"`                    // idle server connections kept open per pool
	MaxClients         int           `toml:"max_clients"`                 // client connections at once (0: no limit)
	MaxPoolClients     int           `toml:"max_pool_clients"`            // client connections per pool (0: no limit)
	AcquireTimeout     time.Duration `toml:"acquire_timeout"`             // wait for a server connection before 53300
	IdleTimeout        time.Duration `toml:"idle_timeout"`                // close server connections idle this long (above MinIdle)
	MaxLifetime        time.Duration `toml:"max_lifetime"`                // close server connections this old when they come back
	HealthCheckAfter   time.Duration `toml:"health_check_after"`          // check a server connection idle this long before handing it out
	ResetQuery         string        `toml:"reset_query"`                 // run when a session-mode or pinned client leaves
	ReservePoolSize    int           `toml:"reserve_pool_size"`           // connections a pool may open beyond pool_size for a client that waited reserve_pool_timeout
	ReservePoolTimeout time.Duration `toml:"reserve_pool_timeout"`        // the wait after which a reserve connection may open
	ServerRoundRobin   bool          `toml:"server_round_robin"`          // hand out the idle server connection that waited longest, not the most recently used
	MaxDBConnections   int           `toml:"max_db_connections"`          // server connections per database, all its pools together (0: no limit)
	MaxUserConnections int           `toml:"max_user_connections"`        // server connections per user, all its pools together (0: no limit)
	MaxDBClients       int           `toml:"max_db_client_connections"`   // clients per database, all its pools together (0: no limit)
	MaxUserClients     int           `toml:"max_user_client_connections"` // clients per user, all its pools together (0: no limit)
	AuthFile           string        `toml:"auth_file"`                   // pgbouncer userlist.txt; "": trust every client (unless AuthUser)
	AuthUser           string        `toml:"auth_user"`                   // look users missing from AuthFile up on the server as this user
	AuthQuery          string        `toml:"auth_query"`                  // the lookup, $1 the user name, returning (name, secret); "": DefaultAuthQuery
	AuthDatabase       string        `toml:"auth_dbname"`                 // database the lookup runs in; "": the client's
	AuthHBAFile        string        `toml:"auth_hba_file"`               // pg_hba.conf-style rules choosing each client's method ("": by the secret, or trust)
	AuthType           string        `toml:"auth_type"`                   // without rules: "md5" (by the secret), "scram-sha-256" (SCRAM only), "plain" (cleartext) or "cert" (TLS client certificates)
	AuthIdentFile      string        `toml:"auth_ident_file"`             // pg_ident.conf-style user name maps for the rules' map= options
	TLSCert            string        `toml:"tls_cert"`                    // PEM certificate for client TLS (with TLSKey); "": SSLRequest answered 'N'
	TLSKey             string        `toml:"tls_key"`                     // PEM private key of TLSCert
	TLSCAFile          string        `toml:"tls_ca_file"`                 // PEM CAs that verify the certificates clients offer (for HBA cert lines); "": none asked for
	RequireTLS         bool          `toml:"require_tls"`                 // refuse clients that do not use TLS
	RequireClientCert  bool          `toml:"require_client_cert"`         // refuse clients without TLS and a certificate TLSCAFile verifies
	PreparedPerServer  int           `toml:"prepared_per_server"`         // renamed prepared statements per server connection (transaction mode)
	CacheUnnamed       bool          `toml:"cache_unnamed"`               // keep clients' repeated unnamed statements prepared on the servers (transaction mode)
	EventLoop          bool          `toml:"event_loop"`                  // serve transaction mode's plain transactions on an event loop (experimental)
	IOURing            bool          `toml:"io_uring"`                    // the event loop's writes through an io_uring, a batch per round of events
	TCPDeferAccept     bool          `toml:"tcp_defer_accept"`            // accept a client only once its first bytes came (Linux TCP_DEFER_ACCEPT, as PgBouncer)
	Admin              string        `toml:"admin"`                       // admin HTTP API and /metrics address ("": off)
	Pprof              bool          `toml:"pprof"`                       // Go's runtime profiles under /debug/pprof/ on the admin address
	AdminUsers         []string      `toml:"admin_users"`                 // users who may run every command of the admin console database
	StatsUsers         []string      `toml:"stats_users"`                 // users who may run the admin console's SHOW commands
	ConsoleDatabase    string        `toml:"console_database"`            // the admin console's database name (served when admin_users or stats_users is set)
	ClientIdleTimeout  time.Duration `toml:"client_idle_timeout"`         // close a client idle (no transaction) this long (0: never)
	IdleTxTimeout      time.Duration `toml:"idle_transaction_timeout"`    // close a client idle inside a transaction this long (0: never)
	QueryTimeout       time.Duration `toml:"query_timeout"`               // close a client whose query ran this long since its last message (0: never)
	TxTimeout          time.Duration `toml:"transaction_timeout"`         // close a client whose transaction has been open this long (0: never)
	LoginTimeout       time.Duration `toml:"client_login_timeout"`        // a client's startup, TLS and authentication together (0: 10s)
	ShutdownTimeout    time.Duration `toml:"shutdown_timeout"`            // drain time once the context ends
	LogLevel           string        `toml:"log_level"`                   // debug, info, warn or error
	// Databases are servers for some client database names (the
	// [databases] table: name = "postgres://host:port/database"), as
	// PgBouncer's [databases]; see route.NewTargets. With entries,
	// ServerURL serves the other names, and without it they are refused.
	Databases map[string]string `toml:"databases"`
	// Pools override the pool settings above for some databases and
	// users ([pools."database/user"] tables; see PoolSettings).
	Pools map[string]PoolSettings `toml:"pools"`
}

// fixedAtStart are the settings set up at start: a reload keeps their
// values (keepFixed) and the console's SET refuses them.
var fixedAtStart = map[string]bool{"listen": true, "admin": true,
	"unix_socket_dir": true, "unix_socket_mode": true, "unix_socket_group": true, "auth_type": true,
	"console_database": true, "event_loop": true, "io_uring": true, "tcp_defer_accept": true, "pprof": true,
	"log_level": true, "require_tls": true, "require_client_cert": true, "cache_unnamed": true, "client_login_timeout": true}

// checkAny refuses auth_type any (PgBouncer's: no password, the client's
// user name ignored) unless every database logs in as a user of its own:
// a [databases] entry with a user, and no server_url for the others,
// which would serve each client as the user it names.
func (c *Config) checkAny() error {
	if c.AuthHBAFile != "" {
		return errors.New("--auth-type any and --auth-hba-file: the rules choose the methods; give one")
	}
	if c.ServerURL != "" {
		return errors.New("--auth-type any needs every database to log in as a user of its own ([databases] entries with a user); --server-url would serve other databases as whatever user a client names")
	}
	targets, err := route.NewTargets(c.ServerURL, c.Databases)
	if err != nil {
		return err
	}
	for _, name := range targets.Names() {
		if tg, err := targets.For(name); err == nil && tg.User == "" {
			return fmt.Errorf("--auth-type any needs every database to log in as a user of its own: [databases] %s has no user", name)
		}
	}
	return nil
}

// passwordSource tells whether c has somewhere to take clients'
// passwords from: the auth file, or the auth query (a top-level auth user
// or a database's ?auth_user=).
func (c *Config) passwordSource() bool {
	if c.AuthFile != "" || c.AuthUser != "" {
		return true
	}
	t, err := route.NewTargets(c.ServerURL, c.Databases)
	return err == nil && t.AnyAuthUser()
}

// ConfigError is a problem with the settings or the files they name (auth
// file, TLS certificate, server URL): the command line's fault, not the
// server's. Error is Err's text.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

func configError(err error) error { return &ConfigError{err} }

// Check refuses bad settings (as a *ConfigError) before any work.
func (c *Config) Check() error {
	if c.ServerURL == "" && len(c.Databases) == 0 {
		return configError(errors.New("--server-url is required (or server_url, or a [databases] table, in --config)"))
	}
	if _, err := route.NewTargets(c.ServerURL, c.Databases); err != nil {
		return configError(err)
	}
	if _, err := proxy.ParseMode(c.PoolMode); err != nil {
		return configError(err)
	}
	if c.PoolSize < 1 {
		return configError(fmt.Errorf("--pool-size %d: want at least 1", c.PoolSize))
	}
	if c.consoleOn() && c.ConsoleDatabase == "" {
		return configError(errors.New("--console-database is empty: the admin console (--admin-users, --stats-users) needs a database name"))
	}
	for _, u := range append(slices.Clone(c.AdminUsers), c.StatsUsers...) {
		if u == "" {
			return configError(errors.New("--admin-users or --stats-users: an empty user name"))
		}
	}
	if c.MinIdle < 0 {
		return configError(fmt.Errorf("--min-idle %d: want 0 or more (above a pool's size it is capped at it)", c.MinIdle))
	}
	if c.ClientIdleTimeout < 0 || c.IdleTxTimeout < 0 || c.QueryTimeout < 0 || c.TxTimeout < 0 {
		return configError(fmt.Errorf("--client-idle-timeout %s, --idle-transaction-timeout %s, --query-timeout %s, --transaction-timeout %s: want 0 (never) or more",
			c.ClientIdleTimeout, c.IdleTxTimeout, c.QueryTimeout, c.TxTimeout))
	}
	if c.ShutdownTimeout < 0 {
		return configError(fmt.Errorf("--shutdown-timeout %s: want 0 (cut clients at once) or more", c.ShutdownTimeout))
	}
	for _, v := range []struct {
		flag string
		d    time.Duration
	}{{"--acquire-timeout", c.AcquireTimeout}, {"--idle-timeout", c.IdleTimeout}, {"--max-lifetime", c.MaxLifetime},
		{"--health-check-after", c.HealthCheckAfter}, {"--reserve-pool-timeout", c.ReservePoolTimeout}} {
		if v.d <= 0 {
			return configError(fmt.Errorf("%s %s: want more than 0", v.flag, v.d))
		}
	}
	if c.LoginTimeout < 0 {
		return configError(fmt.Errorf("--client-login-timeout %s: want 0 (the default, 10s) or more", c.LoginTimeout))
	}
	if c.MaxClients < 0 || c.MaxPoolClients < 0 {
		return configError(fmt.Errorf("--max-clients %d, --max-pool-clients %d: want 0 (no limit) or more", c.MaxClients, c.MaxPoolClients))
	}
	for _, v := range []struct {
		flag string
		n    int
	}{{"--reserve-pool-size", c.ReservePoolSize}, {"--max-db-connections", c.MaxDBConnections}, {"--max-user-connections", c.MaxUserConnections},
		{"--max-db-client-connections", c.MaxDBClients}, {"--max-user-client-connections", c.MaxUserClients}} {
		if v.n < 0 {
			return configError(fmt.Errorf("%s %d: want 0 or more", v.flag, v.n))
		}
	}
	if c.AuthUser == "" && (c.AuthQuery != "" || c.AuthDatabase != "") {
		return configError(errors.New("--auth-query and --auth-dbname need --auth-user, the user the lookup runs as"))
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return configError(errors.New("--tls-cert and --tls-key go together"))
	}
	if c.TLSCAFile != "" && c.TLSCert == "" {
		return configError(errors.New("--tls-ca-file needs --tls-cert and --tls-key"))
	}
	if c.RequireTLS && c.TLSCert == "" {
		return configError(errors.New("--require-tls needs --tls-cert and --tls-key"))
	}
	switch c.AuthType {
	case "", "md5":
	case "scram-sha-256", "plain":
		if c.AuthHBAFile != "" {
			return configError(fmt.Errorf("--auth-type %s and --auth-hba-file: the rules choose the methods; give one", c.AuthType))
		}
		if !c.passwordSource() {
			return configError(fmt.Errorf("--auth-type %s needs --auth-file or --auth-user (or a database's auth_user) to take passwords from", c.AuthType))
		}
	case "any":
		if err := c.checkAny(); err != nil {
			return configError(err)
		}
	case "cert":
		if c.AuthHBAFile != "" {
			return configError(errors.New("--auth-type cert and --auth-hba-file: the rules choose the methods; give one (a hostssl ... cert line does the same)"))
		}
		if c.TLSCAFile == "" {
			return configError(errors.New("--auth-type cert needs --tls-ca-file to verify client certificates with"))
		}
	default:
		return configError(fmt.Errorf("--auth-type %q: want md5, scram-sha-256, plain, cert or any", c.AuthType))
	}
	if c.AuthIdentFile != "" && c.AuthHBAFile == "" {
		return configError(errors.New("--auth-ident-file needs --auth-hba-file, whose map= options name its maps"))
	}
	if c.RequireClientCert && c.TLSCAFile == "" {
		return configError(errors.New("--require-client-cert needs --tls-ca-file to verify the certificates with"))
	}
	if c.UnixSocketDir != "" {
		if _, err := parseSocketMode(c.UnixSocketMode); err != nil {
			return configError(err)
		}
		if _, err := lookupGroup(c.UnixSocketGroup); err != nil {
			return configError(err)
		}
	} else if c.UnixSocketGroup != "" {
		return configError(errors.New("--unix-socket-group needs --unix-socket-dir"))
	}
	if c.PreparedPerServer < 1 {
		return configError(fmt.Errorf("--prepared-per-server %d: want at least 1", c.PreparedPerServer))
	}
	if err := c.checkPools(); err != nil {
		return configError(err)
	}
	return nil
}

// mode is PoolMode parsed (Check has refused anything else).
func (c *Config) mode() proxy.Mode {
	m, _ := proxy.ParseMode(c.PoolMode)
	return m
}

// TOMLResolver reads a config file for kong; see cmdline.TOMLResolver.
var TOMLResolver = cmdline.TOMLResolverWithTables("pools", "databases")
