// Serving: the proxy, its pools and auth, the admin API, reload and drain.

package proxyserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/admin"
	"github.com/qpkit/qpkit/pkg/bouncerini"
	"github.com/qpkit/qpkit/pkg/connstr"
	"github.com/qpkit/qpkit/pkg/console"
	"github.com/qpkit/qpkit/pkg/hba"
	"github.com/qpkit/qpkit/pkg/netloop"
	"github.com/qpkit/qpkit/pkg/pgwire"
	"github.com/qpkit/qpkit/pkg/pool"
	"github.com/qpkit/qpkit/pkg/proxy"
	"github.com/qpkit/qpkit/pkg/rawconn"
	"github.com/qpkit/qpkit/pkg/route"
)

// Options are what Serve needs besides the settings.
type Options struct {
	Config Config
	// Load returns the settings a reload applies (it rereads the config
	// file); nil keeps Config. Either way a reload rereads the auth file,
	// and Listen, Admin, the unix socket settings and AuthType keep their
	// first values.
	Load func() (Config, error)
	// Defaults are the settings' defaults by config key, in flag syntax
	// ("10m"), for the admin console's SHOW CONFIG (nil: not shown).
	Defaults map[string]string
	// Logs receives the text log (nil: discarded).
	Logs io.Writer
	// Hup reloads at each receive (SIGHUP); nil never does.
	Hup <-chan os.Signal
	// Ready, when not nil, is told the listening address (tests listen on
	// port 0).
	Ready func(addr string)
	// Notes are logged once when serving starts: what a pgbouncer.ini the
	// settings came from sets that qprouter ignores, say.
	Notes []bouncerini.Note
}

// Server is a configured proxy with its pools and admin API. Create it with New.
type Server struct {
	opts  Options
	log   *slog.Logger
	proxy *proxy.Proxy
	admin *admin.Server   // nil without Config.Admin
	loops []*netloop.Loop // none without Config.EventLoop
	// targets is the server of each client database name (a reload
	// updates it).
	targets *route.Targets
	pools   *route.Pools // the proxy's

	mu    sync.Mutex
	cfg   Config
	users map[string]pgwire.Credential  // nil: trust every client (unless lookupOn)
	hba   *hba.Rules                    // nil: no HBA file; the method follows the secret
	authq *authQuery                    // used when lookupOn
	cert  *pgwire.Certificate           // nil: no client TLS
	cas   atomic.Pointer[x509.CertPool] // --tls-ca-file's CAs, read again at a reload; nil: none

	console *console.Console // nil: no admin console (Config.consoleOn)
	stats   *consoleStats    // the console's counters, with it
	admins  consoleClients   // the console's own clients, for its listings
	// defaults is Options.Defaults as a Config, for SHOW CONFIG.
	defaults Config
	// changing serializes reloads and the console's SETs: each reads the
	// configuration in force and applies a new one.
	changing sync.Mutex
	stop     context.CancelFunc // ends Serve (the console's SHUTDOWN); set by Serve
}

// Serve runs a Server from opts until ctx ends, then drains for
// Config.ShutdownTimeout and returns nil. Bad settings or files are a
// *ConfigError.
func Serve(ctx context.Context, opts Options) error {
	s, err := New(opts)
	if err != nil {
		return err
	}
	return s.Serve(ctx)
}

// New checks the settings, reads the auth file and TLS certificate and
// builds the pools, the proxy and the admin API; nothing listens yet.
func New(opts Options) (*Server, error) {
	c := opts.Config
	if err := c.Check(); err != nil {
		return nil, err
	}
	if opts.Logs == nil {
		opts.Logs = io.Discard
	}
	s := &Server{opts: opts, log: newLogger(opts.Logs, c.LogLevel), cfg: c}
	users, err := loadUsers(c.AuthFile)
	if err != nil {
		return nil, err
	}
	s.users = users
	if s.hba, err = loadHBA(c); err != nil {
		return nil, err
	}
	targets, err := route.NewTargets(c.ServerURL, c.Databases)
	if err != nil {
		return nil, configError(err)
	}
	targets.Log = s.log
	s.targets = targets
	s.authq = newAuthQuery(targets, s.authSettings, s.serverPassword)
	if c.Admin != "" {
		s.admin = s.newAdmin()
	}
	if adm := s.admin; adm != nil {
		targets.WrapDial(func(dial pgconn.DialFunc) pgconn.DialFunc {
			return pool.CountingDial(dial, adm.Bytes(admin.FromServer), adm.Bytes(admin.ToServer))
		})
	}
	connect := targets.Connector(s.serverPassword)
	auth := &pgwire.ServerConfig{Credentials: s.credential, QuickCredentials: s.quickCredential, RequireTLS: c.RequireTLS || c.RequireClientCert,
		StartupTimeout: c.LoginTimeout}
	switch {
	case s.hba != nil:
		auth.Rules = s.rules()
	case c.AuthType == "scram-sha-256" || c.AuthType == "plain":
		// Every client the same method, whatever its secret (Check made
		// sure there are secrets), as PgBouncer's auth_type.
		m := pgwire.AuthSCRAM
		if c.AuthType == "plain" {
			m = pgwire.AuthPassword
		}
		auth.Rules = func(pgwire.Peer) (pgwire.AuthMethod, string) { return m, "" }
	case c.AuthType == "cert":
		// PgBouncer's auth_type = cert: a TLS client whose certificate
		// --tls-ca-file verifies, logging in as its common name; others
		// refused as a pg_hba.conf without a line for them refuses.
		certOnly, err := hba.Parse(strings.NewReader("hostssl all all all cert\n"), "--auth-type cert")
		if err != nil {
			return nil, err
		}
		auth.Rules = pgwire.HBARules(func() *hba.Rules { return certOnly }, nil)
	}
	if c.TLSCert != "" {
		if s.cert, err = pgwire.LoadCertificate(c.TLSCert, c.TLSKey); err != nil {
			return nil, configError(err)
		}
		auth.TLS = s.cert.Config()
		if c.TLSCAFile != "" {
			cas, err := pgwire.LoadCAs(c.TLSCAFile)
			if err != nil {
				return nil, configError(err)
			}
			s.cas.Store(cas)
			base := auth.TLS
			base.ClientAuth = tls.VerifyClientCertIfGiven
			if c.RequireClientCert {
				base.ClientAuth = tls.RequireAndVerifyClientCert
			}
			// Each handshake verifies with the CAs in force, which a
			// reload may have replaced.
			base.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
				cfg := base.Clone()
				cfg.ClientCAs = s.cas.Load()
				return cfg, nil
			}
		}
	}
	s.pools = &route.Pools{Connect: connect, Config: s.poolConfig, Log: s.log, Targets: targets}
	popts := proxy.Options{
		Mode:                   c.mode(),
		ModeFor:                s.modeFor,
		ClientCaps:             s.clientCaps,
		ClientIdleTimeout:      func() time.Duration { c, _ := s.get(); return c.ClientIdleTimeout },
		IdleTransactionTimeout: func() time.Duration { c, _ := s.get(); return c.IdleTxTimeout },
		QueryTimeout:           func() time.Duration { c, _ := s.get(); return c.QueryTimeout },
		TransactionTimeout:     func() time.Duration { c, _ := s.get(); return c.TxTimeout },
		Pools:                  s.pools,
		Auth:                   auth,
		MaxClients:             c.MaxClients,
		PreparedPerServer:      c.PreparedPerServer,
		CacheUnnamed:           c.CacheUnnamed,
		Log:                    s.log,
		Reload:                 s.reload,
	}
	if c.EventLoop && c.anyTransaction() {
		// One loop: two in one process (one per processor on the 2-vCPU
		// development machine) cost more CPU per transaction, their threads
		// blocking about every other transaction (docs/benchmarks.md).
		for range 1 {
			loop, err := netloop.NewWith(netloop.Options{IOURing: c.IOURing})
			if errors.Is(err, netloop.ErrNoRing) {
				s.log.Warn("event loop: no io_uring, so a write call per write", "err", err)
				loop, err = netloop.New()
			}
			if err != nil {
				s.closeLoops()
				return nil, err
			}
			log := s.log
			loop.OnPanic(func(v any) { log.Warn("event loop: a task panicked; the loop goes on", "panic", v) })
			s.loops = append(s.loops, loop)
		}
		popts.Loops = s.loops
		popts.Pools.Adopt = netloop.Adopter(s.loops...)
	}
	if s.admin != nil {
		s.observe(&popts)
	}
	if c.consoleOn() {
		s.stats = newConsoleStats()
		for k, v := range opts.Defaults {
			setField(&s.defaults, k, v) // the command line's own defaults: valid
		}
		s.console = s.newConsole()
		s.consoleHooks(&popts)
	}
	if s.proxy, err = proxy.New(popts); err != nil {
		s.closeLoops()
		return nil, err
	}
	if s.stats != nil {
		s.stats.dbOf = func(name string) (string, bool) {
			for _, p := range s.proxy.Pools() {
				if pool.NameOf(p.Database, p.User) == name {
					return p.Database, true
				}
			}
			return "", false
		}
	}
	return s, nil
}

func (s *Server) closeLoops() {
	for _, l := range s.loops {
		l.Close()
	}
	s.loops = nil
}

// Reload rereads the settings (Options.Load) and the auth file and applies
// them without dropping clients; on error the old settings stay.
func (s *Server) Reload() error { return s.proxy.Reload() }

// Serve listens on Config.Listen (and Config.Admin) and serves until ctx
// ends, reloading at each Options.Hup; then it drains for
// Config.ShutdownTimeout and returns nil. Should a listener fail, it
// drains all the same and returns that error.
func (s *Server) Serve(ctx context.Context) error {
	c, log := s.opts.Config, s.log
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	s.mu.Lock()
	s.stop = stop
	s.mu.Unlock()
	if s.stats != nil {
		go s.stats.run(ctx)
	}
	go s.sweepPools(ctx)
	for _, n := range s.opts.Notes {
		log.Log(ctx, n.Level, n.Msg)
	}
	var lc net.ListenConfig
	if c.TCPDeferAccept {
		lc.Control = deferAccept
	}
	ln, err := lc.Listen(ctx, "tcp", c.Listen)
	if err != nil {
		return err
	}
	// Raw accept4 and setsockopt (pkg/rawconn); keepalive on with the
	// system's timings: one setsockopt per client rather than four (Go's
	// default sets idle, interval and count too).
	ln = rawconn.Listen(ln, true)
	var uln net.Listener
	if c.UnixSocketDir != "" {
		mode, _ := parseSocketMode(c.UnixSocketMode) // Check has refused a bad one
		gid, _ := lookupGroup(c.UnixSocketGroup)
		port := 0
		if a, ok := ln.Addr().(*net.TCPAddr); ok {
			port = a.Port
		}
		if uln, err = listenUnix(c.UnixSocketDir, port, mode, gid); err != nil {
			ln.Close()
			return err
		}
		log.Info("qprouter listening", "socket", uln.Addr().String())
	}
	var hs *http.Server
	if s.admin != nil {
		aln, err := net.Listen("tcp", c.Admin)
		if err != nil {
			ln.Close()
			if uln != nil {
				uln.Close()
			}
			return fmt.Errorf("admin: %w", err)
		}
		hs = &http.Server{Handler: s.admin, ReadHeaderTimeout: 10 * time.Second}
		go hs.Serve(aln)
		log.Info("admin API listening", "addr", aln.Addr().String())
	}
	if c.AuthType == "any" {
		log.Warn("auth_type any: every client is trusted, and served as its database's user")
	} else if _, users := s.get(); users == nil && !s.lookupOn(c) && s.hba == nil && c.AuthType != "cert" {
		log.Warn("no --auth-file: every client is trusted")
	}
	if s.hba != nil {
		for _, n := range s.hba.Notes {
			log.Warn("auth hba file: " + n)
		}
	}
	defer s.authq.close()
	server := redact(c.ServerURL)
	if c.ServerURL == "" {
		server = "none: only the databases entries are served"
	}
	log.Info("qprouter listening", "addr", ln.Addr().String(), "server", server, "mode", c.PoolMode, "pool_size", c.PoolSize)
	for _, name := range s.targets.Names() {
		tg, _ := s.targets.For(name)
		log.Info("database served elsewhere", "database", name, "server", redact(tg.URL))
	}
	if s.opts.Ready != nil {
		s.opts.Ready(ln.Addr().String())
	}
	serveErr := make(chan error, 2)
	var acceptErr error
	go func() { serveErr <- s.proxy.Serve(ln) }()
	if uln != nil {
		go func() { serveErr <- s.proxy.Serve(uln) }()
	}
	for {
		select {
		case <-s.opts.Hup:
			if err := s.Reload(); err != nil {
				log.Warn("reload failed; keeping the old settings", "err", err)
			} else {
				nc, _ := s.get()
				log.Info("reloaded", "pool_size", nc.PoolSize)
			}
			continue
		case err := <-serveErr:
			if err != nil {
				// A listener failed: the clients connected so far still
				// get their drain, and the error is the exit status.
				log.Error("accepting clients failed; draining", "err", err)
				acceptErr = err
			}
		case <-ctx.Done():
		}
		break
	}
	c, _ = s.get() // the drain time in force
	log.Info("draining", "timeout", c.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
	defer cancel()
	if err := s.proxy.Shutdown(sctx); err != nil {
		log.Warn("drain timed out; closed the remaining clients", "err", err)
	}
	if hs != nil {
		hs.Close()
	}
	s.closeLoops()
	log.Info("stopped")
	return acceptErr
}

// reload is the proxy's Options.Reload: the listen address, server, mode
// and admin address stay as they were.
func (s *Server) reload() error {
	s.changing.Lock()
	defer s.changing.Unlock()
	nc := s.opts.Config
	if s.opts.Load != nil {
		var err error
		if nc, err = s.opts.Load(); err != nil {
			return err
		}
		if err := nc.Check(); err != nil {
			return err
		}
	}
	return s.apply(nc)
}

// apply makes nc the configuration in force, reading the files it names
// again; on error the old one stays, all of it: every step that can fail
// comes before the first that changes anything.
func (s *Server) apply(nc Config) error {
	prev, _ := s.get()
	// The settings fixed at start keep their values first, and so does
	// what is turned on or off only at a restart (below), so that what is
	// checked is what would be in force (auth_type any beside a new
	// server_url, say).
	fixed := keepFixed(prev, &nc)
	// The HBA file is read again; having one or not is decided at start.
	if (nc.AuthHBAFile == "") != (s.opts.Config.AuthHBAFile == "") {
		s.log.Warn("reload: auth_hba_file is turned on or off at the next start; the rules stay as they were")
		nc.AuthHBAFile = prev.AuthHBAFile
	}
	// The certificate files are read again (a renewed certificate); TLS
	// itself, on or off and required or not, stays as at the start, and
	// so do the settings in force (what SHOW CONFIG shows is served).
	// A setting kept so is not read again: the certificate or CAs in
	// force stay, even if their files are gone.
	keptCert, keptCAs := false, false
	if (s.cert != nil) != (nc.TLSCert != "") {
		s.log.Warn("reload: TLS is turned on or off at the next start; tls_cert and tls_key stay as they were")
		nc.TLSCert, nc.TLSKey = prev.TLSCert, prev.TLSKey
		keptCert = true
	}
	// So is the CA file, when there was one at the start (asking clients
	// for certificates, or not, is decided then).
	switch startCAs := s.cas.Load() != nil; {
	case startCAs && nc.TLSCAFile == "":
		s.log.Warn("reload: tls_ca_file is turned off at the next start; the CAs stay as they were")
		nc.TLSCAFile = prev.TLSCAFile
		keptCAs = true
	case !startCAs && nc.TLSCAFile != "":
		s.log.Warn("reload: tls_ca_file is turned on at the next start; it stays off")
		nc.TLSCAFile = ""
	}
	if err := nc.Check(); err != nil {
		return err
	}
	// Without a source of passwords every client is trusted: a lost key
	// or an unset variable must not turn password checks off without a
	// word.
	switch {
	case prev.AuthFile != "" && nc.AuthFile == "":
		return configError(errors.New("auth_file: the new settings have none, which would trust every client; auth_file is turned off only at a restart"))
	case prev.passwordSource() && !nc.passwordSource():
		return configError(errors.New("auth_user: the new settings have no auth file and no auth user (top-level or a database's), which would trust every client; turn password checks off only at a restart"))
	}
	nu, err := loadUsers(nc.AuthFile)
	if err != nil {
		return err
	}
	nh, err := loadHBA(nc)
	if err != nil {
		return err
	}
	var cert *tls.Certificate
	if s.cert != nil && !keptCert {
		if cert, err = pgwire.ReadCertificate(nc.TLSCert, nc.TLSKey); err != nil {
			return configError(err)
		}
	}
	var cas *x509.CertPool
	if s.cas.Load() != nil && !keptCAs {
		if cas, err = pgwire.LoadCAs(nc.TLSCAFile); err != nil {
			return configError(err)
		}
	}
	serversChanged := nc.ServerURL != prev.ServerURL || !maps.Equal(nc.Databases, prev.Databases)
	if serversChanged {
		// New clients of a database whose server changed go to the new
		// one; its pools' server connections close, idle ones now and
		// the others as their clients let go of them (as PgBouncer's
		// RELOAD), so that its clients move over without being dropped.
		// The last step that can fail.
		moved, err := s.targets.Update(nc.ServerURL, nc.Databases)
		if err != nil {
			return configError(err)
		}
		for _, db := range s.proxy.ReconnectWhere(moved) {
			s.log.Info("reload: the database's server changed; its server connections close as they come back", "database", db)
		}
	}
	if cert != nil {
		s.cert.Set(cert)
	}
	if serversChanged || nc.AuthUser != prev.AuthUser || nc.AuthQuery != prev.AuthQuery || nc.AuthDatabase != prev.AuthDatabase {
		s.authq.forget()
	}
	s.proxy.SetLimits(nc.MaxClients, nc.PreparedPerServer)
	s.mu.Lock()
	defer s.mu.Unlock()
	if cas != nil {
		s.cas.Store(cas)
	}
	old := s.cfg
	if modesChanged(old, nc) {
		// A client keeps the mode it connected in (its statements are
		// renamed or not from its first one); servers pass between the
		// modes safely: a session-mode check-in resets the server and
		// forgets its statements, a session's welcome replays settings.
		s.log.Info("reload: pool modes changed; clients that connect from now on get the new ones, connected clients keep theirs")
		if nc.anyTransaction() && s.opts.Config.EventLoop && len(s.loops) == 0 {
			s.log.Info("reload: the event loop starts only at start; transaction-mode clients are served by goroutines until a restart")
		}
	}
	for _, key := range fixed {
		s.log.Warn("reload: this setting changes only at a restart; it stays as it was", "key", key)
	}
	s.cfg, s.users, s.hba = nc, nu, nh
	return nil
}

// keepFixed gives nc old's values of the settings fixed at start (the
// listener, the auth methods, the event loop, ...), so that what SHOW
// CONFIG shows is what is in force, and returns the keys nc would have
// changed.
func keepFixed(old Config, nc *Config) (changed []string) {
	ov, nv := reflect.ValueOf(old), reflect.ValueOf(nc).Elem()
	for i, key := range configKeys {
		if !fixedAtStart[key] {
			continue
		}
		if !reflect.DeepEqual(ov.Field(i).Interface(), nv.Field(i).Interface()) {
			changed = append(changed, key)
			nv.Field(i).Set(ov.Field(i))
		}
	}
	return changed
}

func (s *Server) get() (Config, map[string]pgwire.Credential) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg, s.users
}

// modeFor is the pool mode of a client of (database, user) that connects
// now, by the configuration in force.
func (s *Server) modeFor(database, user string) proxy.Mode {
	c, _ := s.get()
	return c.modeFor(database, user)
}

func (s *Server) poolConfig(database, user string) pool.Config {
	c, _ := s.get()
	return c.poolFor(database, user).config()
}

// clientCaps are the client caps of a database and of a user, by the
// configuration in force.
func (s *Server) clientCaps(database, user string) (maxDB, maxUser int) {
	c, _ := s.get()
	v := c.poolFor(database, user)
	return v.maxDBClients, v.maxUserClients
}

// credential is pgwire's Credentials: from the auth file, then from the
// auth query; trust when there is neither.
func (s *Server) credential(user, database string) (pgwire.Credential, error) {
	if s.opts.Config.AuthType == "any" {
		return pgwire.Credential{Method: pgwire.AuthTrust}, nil
	}
	c, users := s.get()
	if cred, ok := users[user]; ok {
		return cred, nil
	}
	if s.console != nil && database == s.opts.Config.ConsoleDatabase {
		// The console has no server to look users up on: the auth file's
		// users only (as PgBouncer's admin console), or trust without one.
		if users == nil && !s.lookupOn(c) {
			return pgwire.Credential{Method: pgwire.AuthTrust}, nil
		}
		return pgwire.Credential{}, pgwire.ErrUnknownUser
	}
	if s.lookupOn(c) {
		cred, err := s.authq.lookup(context.Background(), user, database)
		if err != nil && !errors.Is(err, pgwire.ErrUnknownUser) {
			s.log.Warn("auth query failed", "user", user, "database", database, "err", err)
		}
		return cred, err
	}
	if users == nil {
		return pgwire.Credential{Method: pgwire.AuthTrust}, nil
	}
	return pgwire.Credential{}, pgwire.ErrUnknownUser
}

// quickCredential is credential without the auth query, for the event
// loop's handshake: false sends the client to credential on a goroutine.
func (s *Server) quickCredential(user, database string) (pgwire.Credential, bool) {
	if s.opts.Config.AuthType == "any" {
		return pgwire.Credential{Method: pgwire.AuthTrust}, true
	}
	c, users := s.get()
	if cred, ok := users[user]; ok {
		return cred, true
	}
	if users == nil && !s.lookupOn(c) {
		return pgwire.Credential{Method: pgwire.AuthTrust}, true
	}
	return pgwire.Credential{}, false
}

// lookupOn reports whether users missing from the auth file are looked
// up through the auth query: with an auth user, top-level or a database's.
func (s *Server) lookupOn(c Config) bool {
	return c.AuthUser != "" || s.targets.AnyAuthUser()
}

// authSettings are the auth query's top-level settings in force.
func (s *Server) authSettings() (query, user, database string) {
	c, _ := s.get()
	return c.AuthQuery, c.AuthUser, c.AuthDatabase
}

// serverPassword is user's plaintext password from the auth file, to log
// in to the server with when the server URL has none ("" for hashes).
func (s *Server) serverPassword(user string) string {
	_, users := s.get()
	return users[user].Plaintext()
}

// loadUsers reads the auth file at path ("": none, trust everyone).
func loadUsers(path string) (map[string]pgwire.Credential, error) {
	if path == "" {
		return nil, nil
	}
	u, err := pgwire.LoadUserList(path)
	if err != nil {
		return nil, configError(err)
	}
	return u, nil
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	l.UnmarshalText([]byte(level))
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// redact is a connection string for logs and the admin API, its
// secrets shown as xxxxx (connstr.Redact).
func redact(s string) string { return connstr.Redact(s) }

// sweepPools removes, every second, the pools that no client uses and
// that hold no server connection for route.DefaultUnusedTimeout, and those
// a reload left behind (route.Pools.Sweep), until ctx ends.
func (s *Server) sweepPools(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for _, name := range s.pools.Sweep(now) {
				s.log.Debug("pool removed: unused, or no longer routed to", "pool", name)
				if s.admin != nil {
					s.admin.ForgetPool(name)
				}
			}
		}
	}
}
