// Targets: which server each client database name is served by, as PgBouncer's [databases] section says.

package route

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pool"
)

// Target is the server that one client database name is served by.
type Target struct {
	// URL is the target as configured (it may hold a password).
	URL string
	// Database is the database on the server ("": the client's name).
	Database string
	// User, when set, is the user every client of the database is served
	// as (PgBouncer's user=): their pools are one pool per database.
	User string
	// AuthUser, AuthQuery and AuthDatabase, from the URL's auth_user,
	// auth_query and auth_dbname parameters, are PgBouncer's per-database
	// auth query settings ("": the top-level ones).
	AuthUser, AuthQuery, AuthDatabase string
	// Conn is URL without the parameters qprouter takes for itself, as pgx
	// reads it.
	Conn string

	cfg         *pgconn.Config // host, port, TLS and password; Database and User are set per connection
	ownPassword bool           // a named entry's URL gives a password: it wins over the auth file's
	// hosts are the URL's hosts, each with its attempts (pgx tries TLS
	// and then plain text for sslmode=prefer), in the URL's order.
	hosts [][]*pgconn.FallbackConfig
	// inOrder (load_balance_hosts=disable) tries the hosts in the URL's
	// order for every connection; otherwise each new connection starts at
	// the next host (round robin, PgBouncer's default), the others tried
	// after it.
	inOrder bool
	next    atomic.Uint32
	// connectQuery runs on each new server connection; its errors are
	// logged and ignored, as PgBouncer's connect_query.
	connectQuery string
}

// Targets maps client database names to servers: named entries first,
// then the default server (nil: an unknown name is refused). Update
// replaces the map at a reload; lookups see one map or the other, whole.
type Targets struct {
	cur atomic.Pointer[targetSet]
	// Log, when set, hears of failed connect queries.
	Log *slog.Logger

	mu   sync.Mutex                            // serializes Update and WrapDial
	wrap func(pgconn.DialFunc) pgconn.DialFunc // WrapDial's, for the targets Update adds
}

// targetSet is one reading of the settings: the named targets and the
// default server.
type targetSet struct {
	named    map[string]*Target
	fallback *Target
	// anyAuthUser: some target names its own auth user (asked at every
	// login that the auth file does not answer, so kept, not counted).
	anyAuthUser bool
	// gen counts the Updates before this set.
	gen uint64
}

// lookup is the set's target of a client's database name (nil: none).
func (ts *targetSet) lookup(database string) *Target {
	if tg := ts.named[database]; tg != nil {
		return tg
	}
	return ts.fallback
}

// NoDatabaseError is a client's database name that no target serves. It
// carries PostgreSQL's SQLSTATE for an unknown database, 3D000.
type NoDatabaseError struct{ Database string }

func (e *NoDatabaseError) Error() string {
	return fmt.Sprintf("no such database: %q (no databases entry names it and there is no default server)", e.Database)
}

// SQLState is invalid_catalog_name.
func (e *NoDatabaseError) SQLState() string { return "3D000" }

// NewTargets reads the default server (any connection string pgx
// accepts; its database and user are ignored, each client's are used;
// "": none) and the named targets (postgres:// URLs whose database, when
// given, replaces the client's and whose user, when given, is forced;
// the name "*" is the default server, which then must not be given
// twice). Errors name the entry.
func NewTargets(defaultURL string, named map[string]string) (*Targets, error) {
	ts, err := parseSet(defaultURL, named)
	if err != nil {
		return nil, err
	}
	t := &Targets{}
	t.cur.Store(ts)
	return t, nil
}

// parseSet reads NewTargets' arguments.
func parseSet(defaultURL string, named map[string]string) (*targetSet, error) {
	t := &targetSet{named: make(map[string]*Target, len(named))}
	if star, ok := named["*"]; ok {
		if defaultURL != "" {
			return nil, fmt.Errorf(`databases."*" and server_url both name the default server: keep one`)
		}
		defaultURL = star
	}
	if defaultURL != "" {
		conn, own, err := takeOwnParams(defaultURL)
		if err != nil {
			return nil, fmt.Errorf("server url: %w", err)
		}
		cfg, err := pgconn.ParseConfig(conn)
		if err != nil {
			return nil, fmt.Errorf("server url: %w", err)
		}
		t.fallback = newTarget(defaultURL, conn, cfg, own)
	}
	names := make([]string, 0, len(named))
	for name := range named {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if name == "*" {
			continue
		}
		tg, err := parseTarget(named[name])
		if err != nil {
			return nil, fmt.Errorf("databases.%q: %w", name, err)
		}
		t.named[name] = tg
		t.anyAuthUser = t.anyAuthUser || tg.AuthUser != ""
	}
	t.anyAuthUser = t.anyAuthUser || t.fallback != nil && t.fallback.AuthUser != ""
	return t, nil
}

// Update replaces the targets with those of NewTargets(defaultURL, named)
// (a reload); on error nothing changes. A target whose URL is unchanged is
// kept as it was (its round robin goes on). moved reports whether a
// client database name is now served by another target, or by none: its
// pools' server connections are on the old one.
func (t *Targets) Update(defaultURL string, named map[string]string) (moved func(database string) bool, err error) {
	ns, err := parseSet(defaultURL, named)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.cur.Load()
	keep := func(tg *Target, was *Target) *Target {
		if was != nil && was.URL == tg.URL {
			return was
		}
		if t.wrap != nil {
			tg.cfg.DialFunc = t.wrap(tg.cfg.DialFunc)
		}
		return tg
	}
	for name, tg := range ns.named {
		ns.named[name] = keep(tg, old.named[name])
	}
	if ns.fallback != nil {
		ns.fallback = keep(ns.fallback, old.fallback)
	}
	ns.gen = old.gen + 1
	t.cur.Store(ns)
	return func(database string) bool { return old.lookup(database) != ns.lookup(database) }, nil
}

// parseTarget reads a named entry: a URL, so that its database and user
// are told apart from the defaults pgx would fill in.
func parseTarget(raw string) (*Target, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("want a postgres:// URL (postgres://[user[:password]@]host[:port]/[database][?sslmode=...])")
	}
	conn, own, err := takeOwnParams(raw)
	if err != nil {
		return nil, err
	}
	cfg, err := pgconn.ParseConfig(conn)
	if err != nil {
		return nil, err
	}
	q, err := libpqQuery(u.RawQuery)
	if err != nil {
		return nil, err
	}
	pw, _ := u.User.Password()
	tg := newTarget(raw, conn, cfg, own)
	tg.Database = cmp.Or(strings.TrimPrefix(u.Path, "/"), q["dbname"], q["database"])
	tg.User = cmp.Or(u.User.Username(), q["user"])
	tg.ownPassword = cmp.Or(pw, q["password"]) != ""
	return tg, nil
}

// ownParams are the URL parameters that qprouter takes out of a target's
// URL before pgx reads it (pgx would send them to the server as settings).
type ownParams struct {
	// inOrder: load_balance_hosts=disable (PgBouncer's and libpq's
	// parameter) tries the hosts in order; round-robin (the default)
	// starts each connection at the next.
	inOrder bool
	// connectQuery (PgBouncer's connect_query) runs on each new server
	// connection before any client uses it.
	connectQuery string
	// authUser, authQuery, authDB: the per-database auth query settings.
	authUser, authQuery, authDB string
}

// ownKeys are the URL parameters ownParams takes.
var ownKeys = []string{"load_balance_hosts", "connect_query", "auth_user", "auth_query", "auth_dbname"}

// takeOwnParams splits a postgres:// URL into what pgx reads and ownParams.
// The other parameters stay as written: pgx reads a URL's query as libpq
// does, where only %XX is an escape and '+' a plus, so decoding and
// encoding them again as a form turned "a%20b" into "a+b".
func takeOwnParams(raw string) (conn string, p ownParams, err error) {
	if !strings.HasPrefix(raw, "postgres://") && !strings.HasPrefix(raw, "postgresql://") {
		return raw, p, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", p, err
	}
	// qprouter's own parameters are read as a form (a '+' is a space, as
	// Go's url.Values and earlier releases read them); the others are
	// left to pgx as written. Split on '&' only, as libpq splits (a ';'
	// is part of a value).
	own := map[string]string{}
	var keep []string
	for _, part := range strings.Split(u.RawQuery, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		key, err := url.QueryUnescape(k)
		if err != nil || !slices.Contains(ownKeys, key) {
			keep = append(keep, part)
			continue
		}
		if own[key], err = url.QueryUnescape(v); err != nil {
			return "", p, fmt.Errorf("URL parameter %s: %w", key, err)
		}
	}
	if len(own) == 0 {
		return raw, p, nil
	}
	switch v := own["load_balance_hosts"]; v {
	case "disable":
		p.inOrder = true
	case "round-robin", "":
	default:
		return "", p, fmt.Errorf("load_balance_hosts=%s: want round-robin or disable", v)
	}
	p.connectQuery = own["connect_query"]
	p.authUser, p.authQuery, p.authDB = own["auth_user"], own["auth_query"], own["auth_dbname"]
	u.RawQuery = strings.Join(keep, "&")
	return u.String(), p, nil
}

// libpqQuery reads a URL's query as libpq does: key=value pairs split on
// '&', each decoded for %XX only (a '+' stays a plus); the last of a
// repeated key wins.
func libpqQuery(raw string) (map[string]string, error) {
	q := map[string]string{}
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		key, err := url.PathUnescape(k)
		if err != nil {
			return nil, fmt.Errorf("URL parameter %q: %w", k, err)
		}
		if q[key], err = url.PathUnescape(v); err != nil {
			return nil, fmt.Errorf("URL parameter %s: %w", key, err)
		}
	}
	return q, nil
}

// newTarget groups cfg's attempts by host.
func newTarget(raw, conn string, cfg *pgconn.Config, own ownParams) *Target {
	tg := &Target{URL: raw, Conn: conn, cfg: cfg, inOrder: own.inOrder, connectQuery: own.connectQuery,
		AuthUser: own.authUser, AuthQuery: own.authQuery, AuthDatabase: own.authDB}
	attempts := append([]*pgconn.FallbackConfig{{Host: cfg.Host, Port: cfg.Port, TLSConfig: cfg.TLSConfig}}, cfg.Fallbacks...)
	for _, a := range attempts {
		if n := len(tg.hosts); n > 0 && tg.hosts[n-1][0].Host == a.Host && tg.hosts[n-1][0].Port == a.Port {
			tg.hosts[n-1] = append(tg.hosts[n-1], a)
			continue
		}
		tg.hosts = append(tg.hosts, []*pgconn.FallbackConfig{a})
	}
	return tg
}

// rotate sets cfg's attempts for the next connection: the hosts from the
// round robin's next one on.
func (tg *Target) rotate(cfg *pgconn.Config) {
	n := len(tg.hosts)
	if n < 2 || tg.inOrder {
		return
	}
	start := int(tg.next.Add(1)-1) % n
	var attempts []*pgconn.FallbackConfig
	for i := range n {
		attempts = append(attempts, tg.hosts[(start+i)%n]...)
	}
	cfg.Host, cfg.Port, cfg.TLSConfig = attempts[0].Host, attempts[0].Port, attempts[0].TLSConfig
	cfg.Fallbacks = attempts[1:]
}

// Hosts are the target's hosts, host:port (a socket directory:port), in
// the URL's order.
func (tg *Target) Hosts() []string {
	out := make([]string, len(tg.hosts))
	for i, h := range tg.hosts {
		out[i] = net.JoinHostPort(h[0].Host, strconv.Itoa(int(h[0].Port)))
	}
	return out
}

// InOrder reports load_balance_hosts=disable: hosts tried in order.
func (tg *Target) InOrder() bool { return tg.inOrder }

// ConnectQuery is the query run on each new server connection ("": none).
func (tg *Target) ConnectQuery() string { return tg.connectQuery }

// AnyAuthUser reports whether a target names its own auth user.
func (t *Targets) AnyAuthUser() bool { return t.cur.Load().anyAuthUser }

// Default is the target of the names no entry gives (nil: refused).
func (t *Targets) Default() *Target { return t.cur.Load().fallback }

// For returns the target of a client's database name.
func (t *Targets) For(database string) (*Target, error) {
	if tg := t.cur.Load().lookup(database); tg != nil {
		return tg, nil
	}
	return nil, &NoDatabaseError{Database: database}
}

// Names are the named targets' database names, sorted.
func (t *Targets) Names() []string {
	named := t.cur.Load().named
	out := make([]string, 0, len(named))
	for n := range named {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// WrapDial makes every target's connections pass through wrap (byte
// counting), those Update adds later too; call it once, before the first
// connection.
func (t *Targets) WrapDial(wrap func(pgconn.DialFunc) pgconn.DialFunc) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.wrap = wrap
	for _, tg := range t.all() {
		tg.cfg.DialFunc = wrap(tg.cfg.DialFunc)
	}
}

func (t *Targets) all() []*Target {
	ts := t.cur.Load()
	out := make([]*Target, 0, len(ts.named)+1)
	for _, tg := range ts.named {
		out = append(out, tg)
	}
	if ts.fallback != nil {
		out = append(out, ts.fallback)
	}
	return out
}

// ConnConfig is the connection settings for a pool of database (the
// client's name) and user (the pool's: the forced one, if any). The
// password: a named entry's own (as PgBouncer's password=), else the
// user's from password (the auth file's plaintext), else the default
// server URL's.
func (t *Targets) ConnConfig(database, user string, password func(user string) string) (*pgconn.Config, error) {
	tg, err := t.For(database)
	if err != nil {
		return nil, err
	}
	return tg.connConfig(database, user, password), nil
}

// connConfig is ConnConfig on tg.
func (tg *Target) connConfig(database, user string, password func(user string) string) *pgconn.Config {
	cfg := tg.cfg.Copy()
	tg.rotate(cfg)
	cfg.Database = cmp.Or(tg.Database, database)
	cfg.User = user
	if password != nil && !tg.ownPassword {
		if p := password(user); p != "" {
			cfg.Password = p
		}
	}
	return cfg
}

// minAttempt is the least time connectHosts gives one address.
const minAttempt = 250 * time.Millisecond

// connectHosts is pgconn.ConnectConfig with, when cfg's URL has several
// hosts and no connect_timeout, a connect_timeout of its own: an equal
// share of ctx's time per timer pgconn will start. pgconn bounds the tries
// of an address only by connect_timeout (as libpq does), so a host that
// accepts TCP and then stays silent (a frozen VM, a black-holed address)
// would use up the whole acquire timeout and the next host never be
// tried. pgconn itself still picks among the hosts
// (target_session_attrs=prefer-standby falls back to a primary only
// after trying them all).
func connectHosts(ctx context.Context, cfg *pgconn.Config, hosts int) (*pgconn.PgConn, error) {
	dl, ok := ctx.Deadline()
	if cfg.ConnectTimeout == 0 && hosts > 1 && ok {
		cfg.ConnectTimeout = max(time.Until(dl)/time.Duration(timers(ctx, cfg)), minAttempt)
	}
	return pgconn.ConnectConfig(ctx, cfg)
}

// timers counts the connect_timeout timers pgconn starts for cfg: it
// tries each attempt (a host's TLS try, then its plain one) at every
// address the host resolves to, in order, and starts a timer whenever
// the address differs from the last one's.
func timers(ctx context.Context, cfg *pgconn.Config) int {
	resolved := map[string][]string{}
	n, last := 0, ""
	for _, a := range append([]*pgconn.FallbackConfig{{Host: cfg.Host, Port: cfg.Port}}, cfg.Fallbacks...) {
		addrs, ok := resolved[a.Host]
		if !ok {
			addrs = lookup(ctx, cfg, a.Host)
			resolved[a.Host] = addrs
		}
		for _, ad := range addrs {
			if k := net.JoinHostPort(ad, strconv.Itoa(int(a.Port))); k != last {
				n, last = n+1, k
			}
		}
	}
	return max(n, 1)
}

// lookup is host's addresses as pgconn resolves them: the host itself for
// an IP address or a socket directory, or when the lookup fails (then
// pgconn's fails too).
func lookup(ctx context.Context, cfg *pgconn.Config, host string) []string {
	if strings.HasPrefix(host, "/") || net.ParseIP(host) != nil || cfg.LookupFunc == nil {
		return []string{host}
	}
	addrs, err := cfg.LookupFunc(ctx, host)
	if err != nil || len(addrs) == 0 {
		return []string{host}
	}
	return addrs
}

// Connector opens pools' server connections on their database's target.
func (t *Targets) Connector(password func(user string) string) pool.Connector {
	return func(ctx context.Context, database, user string) (*pgconn.PgConn, error) {
		// One target for the whole connection, though a reload may
		// replace it meanwhile.
		tg, err := t.For(database)
		if err != nil {
			return nil, err
		}
		pc, err := connectHosts(ctx, tg.connConfig(database, user, password), len(tg.hosts))
		if err != nil {
			return nil, err
		}
		if tg.connectQuery == "" {
			return pc, nil
		}
		_, err = pc.Exec(ctx, tg.connectQuery).ReadAll()
		var pe *pgconn.PgError
		switch {
		case errors.As(err, &pe):
			if t.Log != nil {
				t.Log.Warn("connect_query failed", "database", database, "user", user, "err", err)
			}
		case err != nil:
			pc.Close(context.Background())
			return nil, fmt.Errorf("connect_query: %w", err)
		}
		return pc, nil
	}
}

// poolUser is the user the pools of (database, user) log in as.
func (t *Targets) poolUser(database, user string) string {
	if tg := t.cur.Load().named[database]; tg != nil && tg.User != "" {
		return tg.User
	}
	return user
}
