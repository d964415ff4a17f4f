// Serving: the proxy, its pools and auth, the admin API, reload and drain.

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/qpkit/qpkit/pkg/admin"
	"github.com/qpkit/qpkit/pkg/pgwire"
	"github.com/qpkit/qpkit/pkg/pool"
	"github.com/qpkit/qpkit/pkg/proxy"
	"github.com/qpkit/qpkit/pkg/route"
)

// settings are what a reload can change.
type settings struct {
	mu    sync.Mutex
	cli   *cli
	users userlist // nil: trust every client
}

func (s *settings) get() (*cli, userlist) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cli, s.users
}

func (s *settings) poolConfig(string, string) pool.Config {
	c, _ := s.get()
	return pool.Config{
		Size: c.PoolSize, MinIdle: c.MinIdle, MaxClients: c.MaxPoolClients,
		AcquireTimeout: c.AcquireTimeout, IdleTimeout: c.IdleTimeout, MaxLifetime: c.MaxLifetime,
		HealthCheckAfter: c.HealthCheck, ResetQuery: c.ResetQuery,
	}
}

func (s *settings) credential(user, _ string) (pgwire.Credential, error) {
	_, users := s.get()
	if users == nil {
		return pgwire.Credential{Method: pgwire.AuthTrust}, nil
	}
	return users.credential(user)
}

func (s *settings) serverPassword(user string) string {
	_, users := s.get()
	return users.serverPassword(user)
}

// load reads the auth file c names.
func loadUsers(c *cli) (userlist, error) {
	if c.AuthFile == "" {
		return nil, nil
	}
	u, err := readUserlist(c.AuthFile)
	if err != nil {
		return nil, usageError{fmt.Errorf("auth file: %w", err)}
	}
	return u, nil
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	l.UnmarshalText([]byte(level))
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// newAdmin builds the admin server over the proxy *pp will hold.
func newAdmin(pp **proxy.Proxy) *admin.Server {
	return admin.New(admin.Options{
		Pools:   func() []admin.PoolStat { return poolStats(*pp) },
		Clients: func() []admin.ClientStat { return clientStats(*pp) },
		Pause:   func(_ context.Context, name string) error { return pauseAll(*pp, name, true) },
		Resume:  func(_ context.Context, name string) error { return pauseAll(*pp, name, false) },
		Reload:  func(context.Context) error { return (*pp).Reload() },
	})
}

// serve runs qprouter until ctx ends, then drains.
func serve(ctx context.Context, c *cli, args []string, stderr io.Writer, hup <-chan os.Signal, ready func(string)) error {
	var p *proxy.Proxy
	log := newLogger(stderr, c.LogLevel)
	users, err := loadUsers(c)
	if err != nil {
		return err
	}
	st := &settings{cli: c, users: users}
	var adm *admin.Server
	if c.Admin != "" {
		adm = newAdmin(&p)
	}
	var connect pool.Connector
	if adm != nil {
		connect, err = pool.CountingConnector(c.ServerURL, st.serverPassword,
			func(n int) { adm.AddBytes(admin.FromServer, n) }, func(n int) { adm.AddBytes(admin.ToServer, n) })
	} else {
		connect, err = pool.URLConnector(c.ServerURL, st.serverPassword)
	}
	if err != nil {
		return usageError{err}
	}
	pools := &route.Pools{Connect: connect, Config: st.poolConfig, Log: log}

	// reload rereads the command line's config file and the auth file; the
	// listen address, server and mode stay as they were.
	reload := func() error {
		nc, _, _, err := parse(args, io.Discard, io.Discard)
		if err != nil {
			return err
		}
		nu, err := loadUsers(nc)
		if err != nil {
			return err
		}
		st.mu.Lock()
		old := st.cli
		nc.Listen, nc.ServerURL, nc.PoolMode, nc.Admin = old.Listen, old.ServerURL, old.PoolMode, old.Admin
		st.cli, st.users = nc, nu
		st.mu.Unlock()
		return nil
	}

	auth := &pgwire.ServerConfig{Credentials: st.credential, RequireTLS: c.RequireTLS}
	if c.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
		if err != nil {
			return usageError{fmt.Errorf("tls: %w", err)}
		}
		auth.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	opts := proxy.Options{
		Mode:              c.mode(),
		Pools:             pools,
		Auth:              auth,
		MaxClients:        c.MaxClients,
		PreparedPerServer: c.Prepared,
		Log:               log,
		Reload:            reload,
	}
	if adm != nil {
		opts.OnClientBytes = func(in bool, n int) {
			if in {
				adm.AddBytes(admin.FromClient, n)
			} else {
				adm.AddBytes(admin.ToClient, n)
			}
		}
		opts.OnQuery = func(e proxy.QueryEvent) {
			adm.ObserveQuery(e.Pool, "primary", e.SQL, e.Duration, e.Rows, e.SQLState)
		}
		opts.OnAcquire = func(pool string, wait time.Duration) {
			adm.ObserveAcquire(pool, wait)
			adm.RoutingDecision(pool, "primary")
		}
		opts.OnCacheOp = adm.CacheOp
		opts.OnClient = func(connected bool) {
			if connected {
				adm.ClientConnected()
			} else {
				adm.ClientDisconnected()
			}
		}
	}
	p, err = proxy.New(opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return err
	}
	var hs *http.Server
	if adm != nil {
		aln, err := net.Listen("tcp", c.Admin)
		if err != nil {
			ln.Close()
			return fmt.Errorf("admin: %w", err)
		}
		hs = &http.Server{Handler: adm, ReadHeaderTimeout: 10 * time.Second}
		go hs.Serve(aln)
		log.Info("admin API listening", "addr", aln.Addr().String())
	}
	if users == nil {
		log.Warn("no --auth-file: every client is trusted")
	}
	log.Info("qprouter listening", "addr", ln.Addr().String(), "server", redact(c.ServerURL), "mode", c.PoolMode, "pool_size", c.PoolSize)
	if ready != nil {
		ready(ln.Addr().String())
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- p.Serve(ln) }()
	for {
		select {
		case <-hup:
			if err := p.Reload(); err != nil {
				log.Warn("reload failed; keeping the old settings", "err", err)
			} else {
				nc, _ := st.get()
				log.Info("reloaded", "pool_size", nc.PoolSize)
			}
			continue
		case err := <-serveErr:
			if err != nil {
				return err
			}
		case <-ctx.Done():
		}
		break
	}
	log.Info("draining", "timeout", c.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
	defer cancel()
	if err := p.Shutdown(sctx); err != nil {
		log.Warn("drain timed out; closed the remaining clients", "err", err)
	}
	if hs != nil {
		hs.Close()
	}
	log.Info("stopped")
	return nil
}

// redact hides the password of a server URL for the log.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable url)"
	}
	return u.Redacted()
}

func pauseAll(p *proxy.Proxy, name string, pause bool) error {
	if name != "" {
		found := false
		for _, ps := range p.Pools() {
			found = found || ps.Database+"/"+ps.User == name
		}
		if !found {
			return fmt.Errorf("%w: %s", admin.ErrUnknownPool, name)
		}
		return errors.New("pausing one pool is not supported; pause all (no pool)")
	}
	if pause {
		p.Pause()
	} else {
		p.Resume()
	}
	return nil
}

func poolStats(p *proxy.Proxy) []admin.PoolStat {
	paused := p.Paused()
	var out []admin.PoolStat
	for _, s := range p.Pools() {
		out = append(out, admin.PoolStat{Name: s.Database + "/" + s.User, Database: s.Database, User: s.User, Mode: s.Mode,
			Active: s.Active, Idle: s.Idle, Waiting: s.Waiting, MaxSize: s.Size, Paused: paused})
	}
	return out
}

func clientStats(p *proxy.Proxy) []admin.ClientStat {
	var out []admin.ClientStat
	for _, c := range p.Clients() {
		out = append(out, admin.ClientStat{ID: c.Addr, Pool: c.Database + "/" + c.User, User: c.User, Database: c.Database,
			Application: c.Application, Addr: c.Addr, State: c.State, TLS: c.TLS, Pinned: c.Pinned, ConnectedAt: c.ConnectedSince})
	}
	return out
}
