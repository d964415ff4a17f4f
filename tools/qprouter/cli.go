// Command line, config file and exit codes of qprouter.

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/qpkit/qpkit/pkg/bouncerini"
	"github.com/qpkit/qpkit/pkg/cmdline"
	"github.com/qpkit/qpkit/pkg/proxyserver"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // could not start or serve
	exitUsage = 2 // bad command line, config file or auth file
)

// cli is the command line. Every flag is also an environment variable and
// a key of the --config file (the flag name with dashes as underscores);
// the command line wins over the environment, which wins over the file,
// which wins over the --pgbouncer-ini file, which wins over the defaults.
type cli struct {
	Config       kong.ConfigFlag `help:"TOML file with any of these settings (keys as flag names with underscores)." placeholder:"FILE" env:"QPROUTER_CONFIG"`
	PgbouncerINI string          `name:"pgbouncer-ini" help:"PgBouncer configuration file to take the settings qprouter shares with PgBouncer from (beneath flags, environment and --config)." placeholder:"FILE" env:"QPROUTER_PGBOUNCER_INI"`
	Settings     settings        `embed:""`
}

// settings are the flags of proxyserver.Config, field for field (the
// conversion proxyserver.Config(c.Settings) keeps them in step).
type settings struct {
	Listen             string        `help:"Address clients connect to." default:"127.0.0.1:6432" env:"QPROUTER_LISTEN"`
	UnixSocketDir      string        `name:"unix-socket-dir" help:"Also listen on a Unix socket in this directory, named as PostgreSQL names it (.s.PGSQL.<port of --listen>), so that psql -h DIR -p PORT reaches qprouter; a stale socket file is replaced. Empty: TCP only." placeholder:"DIR" env:"QPROUTER_UNIX_SOCKET_DIR"`
	UnixSocketMode     string        `help:"Permissions of the Unix socket file, octal." default:"0777" env:"QPROUTER_UNIX_SOCKET_MODE"`
	UnixSocketGroup    string        `help:"Group of the Unix socket file, a name or number (empty: qprouter's own), so that with --unix-socket-mode 0770 only its members connect." placeholder:"GROUP" env:"QPROUTER_UNIX_SOCKET_GROUP"`
	ServerURL          string        `name:"server-url" help:"PostgreSQL server: host, port, TLS and optionally a password; database and user come from each client. A [databases] table in --config gives some databases servers of their own (this one then serves the others, or none)." env:"QPROUTER_SERVER_URL" placeholder:"URL"`
	PoolMode           string        `help:"session, transaction or statement (transaction mode where a transaction may not span statements: one that would closes the client, as PgBouncer's)." default:"session" enum:"session,transaction,statement" env:"QPROUTER_POOL_MODE"`
	PoolSize           int           `help:"Server connections per (database, user) at most." default:"20" env:"QPROUTER_POOL_SIZE"`
	MinIdle            int           `help:"Idle server connections kept open per pool." default:"0" env:"QPROUTER_MIN_IDLE"`
	MaxClients         int           `help:"Client connections at once (0: no limit)." default:"0" env:"QPROUTER_MAX_CLIENTS"`
	MaxPoolClients     int           `help:"Client connections per pool at once (0: no limit)." default:"0" env:"QPROUTER_MAX_POOL_CLIENTS"`
	AcquireTimeout     time.Duration `help:"How long a client waits for a server connection before 53300." default:"5s" env:"QPROUTER_ACQUIRE_TIMEOUT"`
	IdleTimeout        time.Duration `help:"Close server connections idle this long (above min-idle)." default:"10m" env:"QPROUTER_IDLE_TIMEOUT"`
	MaxLifetime        time.Duration `help:"Close server connections this old when they come back." default:"1h" env:"QPROUTER_MAX_LIFETIME"`
	HealthCheckAfter   time.Duration `name:"health-check-after" help:"Check a server connection idle this long before handing it out." default:"30s" env:"QPROUTER_HEALTH_CHECK_AFTER"`
	ResetQuery         string        `help:"Run on a server connection when a session-mode (or pinned) client leaves." default:"DISCARD ALL" env:"QPROUTER_RESET_QUERY"`
	ReservePoolSize    int           `help:"Server connections a pool may open beyond --pool-size for a client that has waited --reserve-pool-timeout (0: none)." default:"0" env:"QPROUTER_RESERVE_POOL_SIZE"`
	ReservePoolTimeout time.Duration `help:"How long a client waits before a reserve connection may open for it." default:"5s" env:"QPROUTER_RESERVE_POOL_TIMEOUT"`
	ServerRoundRobin   bool          `help:"Hand out the idle server connection that has waited longest instead of the most recently used one, so that the load spreads over every connection (and the hosts behind a server URL), as PgBouncer's server_round_robin." env:"QPROUTER_SERVER_ROUND_ROBIN"`
	MaxDBConnections   int           `name:"max-db-connections" help:"Server connections per database, all its pools together (0: no limit); a pool at the limit closes another pool's idle connection or waits." default:"0" env:"QPROUTER_MAX_DB_CONNECTIONS"`
	MaxUserConnections int           `help:"Server connections per user, all its pools together (0: no limit)." default:"0" env:"QPROUTER_MAX_USER_CONNECTIONS"`
	MaxDBClients       int           `name:"max-db-client-connections" help:"Clients per database, all its pools together (0: no limit); one more is refused at login." default:"0" env:"QPROUTER_MAX_DB_CLIENT_CONNECTIONS"`
	MaxUserClients     int           `name:"max-user-client-connections" help:"Clients per user, all its pools together (0: no limit)." default:"0" env:"QPROUTER_MAX_USER_CLIENT_CONNECTIONS"`
	AuthFile           string        `help:"pgbouncer-style userlist: lines \"user\" \"password|md5...|SCRAM-SHA-256$...\". Without it every client is trusted." placeholder:"FILE" env:"QPROUTER_AUTH_FILE"`
	AuthUser           string        `name:"auth-user" help:"Look clients missing from --auth-file up on the server, connecting as this user (its password from --auth-file or --server-url)." placeholder:"USER" env:"QPROUTER_AUTH_USER"`
	AuthQuery          string        `name:"auth-query" help:"The lookup: $1 is the user name, the second column the secret (SCRAM verifier or md5 hash). Default: pg_authid's rolpassword (needs a superuser auth user)." placeholder:"SQL" env:"QPROUTER_AUTH_QUERY"`
	AuthDatabase       string        `name:"auth-dbname" help:"Database the auth query runs in (default: the client's)." placeholder:"DB" env:"QPROUTER_AUTH_DBNAME"`
	AuthHBAFile        string        `name:"auth-hba-file" help:"Rules in pg_hba.conf's format choosing each client's method (trust, reject, md5, scram-sha-256, password; peer on local lines, cert on hostssl lines) by connection type, database, user and address; the first line that matches wins and a client no line matches is refused. Passwords still come from --auth-file or --auth-user." placeholder:"FILE" env:"QPROUTER_AUTH_HBA_FILE"`
	AuthType           string        `name:"auth-type" help:"Without --auth-hba-file: md5 (each user's method follows its secret: SCRAM-SHA-256 for a plaintext or SCRAM secret, md5 for an md5 hash), scram-sha-256 (SCRAM only: md5 secrets cannot log in), plain (the password in clear, checked against any secret) or cert (TLS clients with a certificate --tls-ca-file verifies, logging in as its common name; no password) or any (no password, every database served as a user of its own: [databases] entries with a user, no --server-url; any user is a console admin), as PgBouncer's auth_type." default:"md5" enum:"md5,scram-sha-256,plain,cert,any" env:"QPROUTER_AUTH_TYPE"`
	AuthIdentFile      string        `name:"auth-ident-file" help:"User name maps in pg_ident.conf's format, for the map= option of --auth-hba-file's peer and cert lines (which system user or certificate name may be which database user)." placeholder:"FILE" env:"QPROUTER_AUTH_IDENT_FILE"`
	TLSCert            string        `name:"tls-cert" help:"PEM certificate for client TLS (with --tls-key); without it SSLRequest is answered 'N'." placeholder:"FILE" env:"QPROUTER_TLS_CERT"`
	TLSKey             string        `name:"tls-key" help:"PEM private key of --tls-cert." placeholder:"FILE" env:"QPROUTER_TLS_KEY"`
	TLSCAFile          string        `name:"tls-ca-file" help:"PEM certificate authorities to verify the certificates clients offer (asked for, not required); host-based rules' cert method checks them." placeholder:"FILE" env:"QPROUTER_TLS_CA_FILE"`
	RequireTLS         bool          `name:"require-tls" help:"Refuse clients that do not use TLS." env:"QPROUTER_REQUIRE_TLS"`
	RequireClientCert  bool          `name:"require-client-cert" help:"Refuse clients without TLS and a certificate that --tls-ca-file verifies (pgbouncer.ini client_tls_sslmode = verify-ca)." env:"QPROUTER_REQUIRE_CLIENT_CERT"`
	PreparedPerServer  int           `name:"prepared-per-server" help:"Renamed prepared statements kept per server connection (transaction mode)." default:"256" env:"QPROUTER_PREPARED_PER_SERVER"`
	CacheUnnamed       bool          `name:"cache-unnamed" help:"Transaction mode: once a client parses the same unnamed statement a second time, keep it prepared on the servers under a name, so that later Parses of it cost the server nothing (plans then follow PostgreSQL's rules for prepared statements)." env:"QPROUTER_CACHE_UNNAMED"`
	EventLoop          bool          `name:"event-loop" help:"Transaction mode: accept clients and serve their plain transactions on one event loop thread, as PgBouncer does, rather than a goroutine per client (Linux; --no-event-loop for goroutines only)." default:"true" negatable:"" env:"QPROUTER_EVENT_LOOP"`
	IOURing            bool          `name:"io-uring" help:"With the event loop: make the reads of a round of events, and then its writes, through an io_uring, each in one system call, instead of a read or write call per socket (Linux 5.5+; where the kernel refuses, a warning and read and write calls)." default:"true" negatable:"" env:"QPROUTER_IO_URING"`
	TCPDeferAccept     bool          `name:"tcp-defer-accept" help:"Have the kernel hand a client over only once its first bytes (the startup packet) came, saving a wake-up per connection (Linux TCP_DEFER_ACCEPT, on by default as in PgBouncer)." default:"true" negatable:"" env:"QPROUTER_TCP_DEFER_ACCEPT"`
	Admin              string        `help:"Address of the admin HTTP API and /metrics (empty: off)." placeholder:"HOST:PORT" env:"QPROUTER_ADMIN"`
	Pprof              bool          `help:"Also serve Go's runtime profiles (net/http/pprof) under /debug/pprof/ on the admin address." env:"QPROUTER_PPROF"`
	AdminUsers         []string      `name:"admin-users" sep:"," help:"Users who may log in to the admin console database (--console-database) and run every command there: SHOW ..., PAUSE, RESUME, RELOAD, SHUTDOWN (PgBouncer's admin_users). Without it and --stats-users there is no console, and a server database of that name is served as any other." placeholder:"USER,..." env:"QPROUTER_ADMIN_USERS"`
	StatsUsers         []string      `name:"stats-users" sep:"," help:"Users who may log in to the admin console and run its SHOW commands (PgBouncer's stats_users)." placeholder:"USER,..." env:"QPROUTER_STATS_USERS"`
	ConsoleDatabase    string        `name:"console-database" help:"The admin console's database name, answered by qprouter itself." default:"pgbouncer" env:"QPROUTER_CONSOLE_DATABASE"`
	ClientIdleTimeout  time.Duration `help:"Close a client that sent nothing for this long while no transaction of its is open (0: never), as PgBouncer's client_idle_timeout." default:"0s" env:"QPROUTER_CLIENT_IDLE_TIMEOUT"`
	IdleTxTimeout      time.Duration `name:"idle-transaction-timeout" help:"Close a client that sent nothing for this long inside a transaction (its server connection is discarded, which rolls the transaction back; 0: never), as PgBouncer's idle_transaction_timeout." default:"0s" env:"QPROUTER_IDLE_TRANSACTION_TIMEOUT"`
	QueryTimeout       time.Duration `name:"query-timeout" help:"Close a client whose query has run on a server for this long since the client's last message, with an error; its server connection is discarded and the query cancelled (0: never), as PgBouncer's query_timeout. Meant, as there, as a backstop a little above the server's statement_timeout." default:"0s" env:"QPROUTER_QUERY_TIMEOUT"`
	TxTimeout          time.Duration `name:"transaction-timeout" help:"Close a client whose transaction (explicit, or a statement on its own) has been open this long, with an error; its server connection is discarded, which rolls the transaction back, and a query under way is cancelled (0: never), as PgBouncer's transaction_timeout and PostgreSQL 17's." default:"0s" env:"QPROUTER_TRANSACTION_TIMEOUT"`
	LoginTimeout       time.Duration `name:"client-login-timeout" help:"How long a client has, from connecting, to send its startup packet, negotiate TLS and log in (pgbouncer.ini client_login_timeout). Restart to change." default:"10s" env:"QPROUTER_CLIENT_LOGIN_TIMEOUT"`
	ShutdownTimeout    time.Duration `help:"On SIGTERM, wait this long for transactions under way." default:"30s" env:"QPROUTER_SHUTDOWN_TIMEOUT"`
	LogLevel           string        `help:"debug, info, warn or error." default:"info" enum:"debug,info,warn,error" env:"QPROUTER_LOG_LEVEL"`
	// Databases come from the --config file's [databases] table and
	// pgbouncer.ini's [databases] entries (readTables).
	Databases map[string]string `kong:"-"`
	// Pools come from the --config file's [pools."database/user"] tables
	// only (readTables).
	Pools map[string]proxyserver.PoolSettings `kong:"-"`
}

const description = `A PostgreSQL pooling proxy.

qprouter accepts PostgreSQL clients on --listen, authenticates them (from
--auth-file, or trusts them), and pools connections to --server-url per
(database, user). --pgbouncer-ini takes the settings of a PgBouncer setup.
SIGTERM drains and exits 0; SIGHUP reloads the settings, the servers and the
auth file.
Exit codes: 0 ok, 1 could not serve, 2 bad usage.`

// parse reads args (and the files they name) into checked settings, with
// the notes of a --pgbouncer-ini file to log.
func parse(args []string, stdout, stderr io.Writer) (cfg proxyserver.Config, notes []bouncerini.Note, exited bool, code int, err error) {
	c := &cli{}
	var iniPools map[string]proxyserver.PoolSettings
	var iniDatabases map[string]string
	config := kong.Configuration(proxyserver.TOMLResolver)
	kctx, exited, code, err := cmdline.Parse(c, "qprouter", description, args, stdout, stderr, config)
	if exited || err != nil {
		return cfg, nil, exited, code, err
	}
	ownServer := c.Settings.ServerURL // from flags, environment or --config, not the ini
	var pools map[string]proxyserver.PoolSettings
	var databases map[string]string
	if c.Config != "" {
		if pools, databases, err = readTables(string(c.Config)); err != nil {
			return cfg, nil, false, 0, err
		}
	}
	_, ownStar := databases["*"] // the --config file's default server
	if c.PgbouncerINI != "" {
		// Parse again with the file's settings beneath what the first
		// parse read from flags, environment and --config.
		b, err := bouncerini.Load(c.PgbouncerINI)
		if err != nil {
			return cfg, nil, false, 0, err
		}
		if ownStar {
			// databases."*" stands for server_url: the ini's refusal
			// of its own (no [databases], a * qprouter cannot use)
			// does not matter.
			delete(b.Errors, "server_url")
		}
		layer := cmdline.Beneath(kctx, b.Values, b.Errors)
		c = &cli{}
		if _, _, _, err := cmdline.Parse(c, "qprouter", description, args, stdout, stderr, config, kong.Resolvers(layer)); err != nil {
			return cfg, nil, false, 0, err
		}
		if err := layer.Err(); err != nil {
			return cfg, nil, false, 0, err
		}
		if err := errors.Join(b.PoolErrors...); err != nil {
			return cfg, nil, false, 0, err
		}
		if iniPools, err = proxyserver.PoolsFromValues(b.Pools); err != nil {
			return cfg, nil, false, 0, err
		}
		iniDatabases = b.Databases
		notes = b.Notes
	}
	cfg = proxyserver.Config(c.Settings)
	// "alice, bob" in the file or the environment: kong splits at the
	// comma only (pgbouncer.ini's lists drop the spaces too).
	for _, users := range []*[]string{&cfg.AdminUsers, &cfg.StatsUsers} {
		for i, u := range *users {
			(*users)[i] = strings.TrimSpace(u)
		}
	}
	cfg.Pools, cfg.Databases = pools, databases
	if ownStar && ownServer == "" {
		cfg.ServerURL = "" // the file's default server over the ini's *
	}
	// The config file's tables over pgbouncer.ini's, field by field.
	cfg.Pools = proxyserver.MergePools(cfg.Pools, iniPools)
	cfg.Databases = proxyserver.MergeDatabases(cfg.Databases, iniDatabases)
	return cfg, notes, false, 0, cfg.Check()
}

// defaults are the flags' defaults by config key (proxyserver.Config's
// field of the same position), for the admin console's SHOW CONFIG.
func defaults() map[string]string {
	st, ct := reflect.TypeFor[settings](), reflect.TypeFor[proxyserver.Config]()
	out := map[string]string{}
	for i := range st.NumField() {
		key, _, _ := strings.Cut(ct.Field(i).Tag.Get("toml"), ",")
		if d, ok := st.Field(i).Tag.Lookup("default"); ok && key != "" {
			out[key] = d
		}
	}
	return out
}

// readTables reads the per-pool settings and the database servers of the
// config file at path.
func readTables(path string) (map[string]proxyserver.PoolSettings, map[string]string, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	pools, err := proxyserver.ReadPools(bytes.NewReader(text))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	dbs, err := proxyserver.ReadDatabases(bytes.NewReader(text))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return pools, dbs, nil
}

// run parses args, serves until ctx ends and returns the exit code. hup
// delivers reload requests; ready, when not nil, is told the listening
// address (tests listen on port 0).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, hup <-chan os.Signal, ready func(addr string)) int {
	cfg, notes, exited, code, err := parse(args, stdout, stderr)
	if exited {
		return code
	}
	if err != nil {
		fmt.Fprintf(stderr, "qprouter: %s\n", cmdline.OneLine(err.Error()))
		return exitUsage
	}
	err = proxyserver.Serve(ctx, proxyserver.Options{
		Config: cfg,
		// A reload rereads the command line's config file (and environment).
		Load: func() (proxyserver.Config, error) {
			nc, _, _, _, err := parse(args, io.Discard, io.Discard)
			return nc, err
		},
		Notes:    notes,
		Defaults: defaults(),
		Logs:     stderr,
		Hup:      hup,
		Ready:    ready,
	})
	var ce *proxyserver.ConfigError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ce):
		fmt.Fprintf(stderr, "qprouter: %s\n", cmdline.OneLine(ce.Error()))
		return exitUsage
	default:
		fmt.Fprintf(stderr, "qprouter: %s\n", cmdline.OneLine(err.Error()))
		return exitError
	}
}
