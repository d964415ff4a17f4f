// PgBouncer's admin console database over the proxy (pkg/console does not
// import pkg/proxy, so this adapts, as admin.go does for the HTTP API).

package proxyserver

import (
	"context"
	"fmt"
	"github.com/qpkit/qpkit/pkg/pool"
	"net"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/qpkit/qpkit/pkg/console"
	"github.com/qpkit/qpkit/pkg/pgwire"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// consoleVersion is SHOW VERSION's answer and the console's server_version.
const consoleVersion = "qprouter (PgBouncer 1.18 admin console)"

// consoleOn reports whether c serves the admin console: only when a user
// may use it, so that a server database of the console's name stays
// reachable otherwise.
func (c *Config) consoleOn() bool { return len(c.AdminUsers)+len(c.StatsUsers) > 0 }

// newConsole builds the console over s.proxy (set later by New).
func (s *Server) newConsole() *console.Console {
	src := console.Source{
		Pools:         s.consolePools,
		Clients:       s.consoleClients,
		Servers:       s.consoleServers,
		Databases:     s.consoleDatabases,
		Users:         s.consoleUsers,
		Config:        s.consoleConfig,
		Stats:         s.stats.snapshot,
		Pause:         func(db string) error { return s.pauseDatabase(db, true) },
		PauseUndoable: s.pauseDatabaseUndoable,
		Resume:        func(db string) error { return s.pauseDatabase(db, false) },
		Disable:       func(db string) error { s.proxy.Disable(db); return nil },
		Enable:        func(db string) error { s.proxy.Enable(db); return nil },
		Reconnect:     func(db string) error { s.proxy.Reconnect(db); return nil },
		Disconnect:    func(db string) { s.proxy.Disconnect(db) },
		Kill: func(db string) error {
			n, err := s.proxy.Kill(db)
			if err != nil {
				return fmt.Errorf("no pool of database %q (qprouter kills the pools a database has)", db)
			}
			s.log.Info("console: killed a database's connections", "database", db, "clients", n)
			return nil
		},
		KillClient: func(id uint32) error {
			if !s.proxy.KillClient(id) && !s.admins.kill(id) {
				return fmt.Errorf("no client 0x%08x", id)
			}
			s.log.Info("console: killed a client", "ptr", fmt.Sprintf("0x%08x", id))
			return nil
		},
		Paused:   func() bool { return s.proxy.Paused() },
		Reload:   s.Reload,
		Set:      s.set,
		Shutdown: s.shutdown,
	}
	return &console.Console{Source: src, Version: consoleVersion, Log: s.log, Database: s.opts.Config.ConsoleDatabase}
}

// serveConsole is the proxy's Options.Console: the client's role from
// admin_users and stats_users as they are now.
func (s *Server) serveConsole(ctx context.Context, cl *pgwire.Client) {
	c, _ := s.get()
	role := consoleRole(c, cl.Startup.Params["user"])
	if role != console.NoAccess {
		s.admins.add(cl)
		defer s.admins.remove(cl)
	}
	s.console.Serve(ctx, cl, role)
}

// consoleRole is what user may do in the console: every command for the
// admin_users, SHOW for the stats_users and, with auth_type any, for
// every other user too (PgBouncer 1.18's admin_post_login lets them in,
// but only admin_users get admin_user: PAUSE, SET, SHUTDOWN... answer
// "admin access needed"); anyone else is refused.
func consoleRole(c Config, user string) console.Role {
	switch {
	case slices.Contains(c.AdminUsers, user):
		return console.Admin
	case slices.Contains(c.StatsUsers, user), c.AuthType == "any":
		return console.StatsOnly
	}
	return console.NoAccess
}

// consoleCancel is the proxy's Options.OnUnknownCancel: a CancelRequest
// with a console client's key goes to the console (a waiting PAUSE
// resumes and ends); any other unknown key is dropped, as before.
func (s *Server) consoleCancel(k pgwire.CancelKey) {
	for _, a := range s.admins.list() {
		if a.cl.Key.Equal(k) {
			if s.console.Cancel(a.cl) {
				s.log.Info("console: a cancel request ended a waiting command", "user", a.cl.Startup.Params["user"])
			}
			return
		}
	}
	s.log.Debug("proxy: cancel request with an unknown key")
}

// consolePools counts as waiting the clients waiting for a server or for
// a paused pool to resume (waitingClients).
func (s *Server) consolePools() []console.Pool {
	waits := waitingClients(s.proxy)
	var out []console.Pool
	for _, p := range s.proxy.Pools() {
		w := waits[pool.NameOf(p.Database, p.User)]
		n := max(p.Waiting, w.n)
		out = append(out, console.Pool{Database: p.Database, User: p.User, ClientsActive: max(0, p.Clients-n),
			ClientsWaiting: n, ServersActive: p.Active, ServersIdle: p.Idle, MaxWait: max(p.MaxWait, w.longest), Mode: p.Mode, Paused: p.Paused})
	}
	if n := s.admins.count(); n > 0 {
		// As PgBouncer lists its admin console: a pool of its own.
		db := s.opts.Config.ConsoleDatabase
		out = append(out, console.Pool{Database: db, User: db, ClientsActive: n, Mode: "statement"})
	}
	return out
}

func (s *Server) consoleClients() []console.Client {
	var out []console.Client
	for _, c := range s.proxy.Clients() {
		state := "active"
		if c.State == "waiting" {
			state = "waiting"
		}
		var wait time.Duration
		if !c.WaitingSince.IsZero() {
			wait = time.Since(c.WaitingSince)
		}
		// request_time: the client's last message, its login before its
		// first (console.Client.RequestTime zero).
		out = append(out, console.Client{ID: c.KeyPID, User: c.User, Database: c.Database, State: state, Addr: c.Addr,
			LocalAddr: c.LocalAddr, ConnectTime: c.ConnectedSince, RequestTime: c.LastRequest, ServerPID: c.ServerPID, TLS: c.TLS,
			ApplicationName: c.Application, Wait: wait})
	}
	db := s.opts.Config.ConsoleDatabase
	for _, a := range s.admins.list() {
		c := console.Client{ID: a.cl.Key.PID, User: a.cl.Startup.Params["user"], Database: db, State: "active",
			Addr: a.cl.Conn.RemoteAddr().String(), ConnectTime: a.since, RequestTime: s.console.RequestTime(a.cl), TLS: a.cl.Startup.TLS,
			ApplicationName: a.cl.Startup.Params["application_name"]}
		if la := a.cl.Conn.LocalAddr(); la != nil && la.Network() == "tcp" {
			c.LocalAddr = la.String()
		}
		out = append(out, c)
	}
	return out
}

func (s *Server) consoleServers() []console.Server {
	var out []console.Server
	for _, sv := range s.proxy.Servers() {
		out = append(out, console.Server{PID: sv.PID, User: sv.User, Database: sv.Database, State: sv.State, Addr: sv.Addr,
			LocalAddr: sv.LocalAddr, ConnectTime: sv.Created, RequestTime: sv.IdleSince, ClientID: sv.ClientKeyPID,
			CloseNeeded: sv.CloseNeeded})
	}
	return out
}

// consoleDatabases lists the database entries, then the databases of the
// pools the default server serves, then the console itself.
func (s *Server) consoleDatabases() []console.Database {
	c, _ := s.get()
	pools := s.proxy.Pools()
	entry := func(name string) console.Database {
		v := c.poolFor(name, "")
		d := console.Database{Name: name, Database: name, PoolSize: v.size, MinPoolSize: v.minIdle, ReservePool: v.reserve,
			MaxConnections: v.maxDB}
		if o, ok := c.Pools[name]; ok && o.PoolMode != nil {
			d.PoolMode = *o.PoolMode
		}
		if tg, err := s.targets.For(name); err == nil && tg != nil {
			if hosts := tg.Hosts(); len(hosts) > 0 {
				if h, p, err := net.SplitHostPort(hosts[0]); err == nil {
					d.Host = h
					d.Port, _ = strconv.Atoi(p)
				}
			}
			if tg.Database != "" {
				d.Database = tg.Database
			}
			d.ForceUser = tg.User
		}
		paused, any := true, false
		for _, p := range pools {
			if p.Database == name {
				d.Connections += p.Active + p.Idle
				paused = paused && p.Paused
				any = true
			}
		}
		d.Paused = any && paused
		d.Disabled = s.proxy.Disabled(name)
		return d
	}
	var out []console.Database
	seen := map[string]bool{c.ConsoleDatabase: true}
	for _, name := range s.targets.Names() {
		seen[name] = true
		out = append(out, entry(name))
	}
	var others []string
	for _, p := range pools {
		if !seen[p.Database] {
			seen[p.Database] = true
			others = append(others, p.Database)
		}
	}
	sort.Strings(others)
	for _, name := range others {
		out = append(out, entry(name))
	}
	self := console.Database{Name: c.ConsoleDatabase, Database: c.ConsoleDatabase, PoolMode: "statement"}
	if _, p, err := net.SplitHostPort(c.Listen); err == nil {
		self.Port, _ = strconv.Atoi(p)
	}
	return append(out, self)
}

// consoleUsers lists the auth file's users and those of the pools, with
// a pool mode of their own ("*/user" settings).
func (s *Server) consoleUsers() []console.User {
	c, users := s.get()
	names := map[string]bool{}
	for u := range users {
		names[u] = true
	}
	for _, p := range s.proxy.Pools() {
		names[p.User] = true
	}
	var out []console.User
	for u := range names {
		mode := ""
		if o, ok := c.Pools["*/"+u]; ok && o.PoolMode != nil {
			mode = *o.PoolMode
		}
		out = append(out, console.User{Name: u, PoolMode: mode})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// consoleConfig is every top-level setting by its config-file key, with
// passwords in server URLs hidden, and its default (Options.Defaults).
func (s *Server) consoleConfig() []console.Setting {
	c, _ := s.get()
	dc := s.defaults
	shown := s.opts.Defaults != nil
	cur, def := settingValues(c), settingValues(dc)
	out := make([]console.Setting, 0, len(cur))
	for i, kv := range cur {
		kv.Changeable = !fixedAtStart[kv.Key]
		if shown {
			kv.Default = def[i].Value
		}
		out = append(out, kv)
	}
	bdef := bouncerSettings(dc)
	for i, b := range bouncerSettings(c) {
		if shown {
			b.Default = bdef[i].Value
		}
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// settingValues are c's top-level settings (tables left out) by config
// key, in field order, as SHOW CONFIG shows them.
func settingValues(c Config) []console.Setting {
	v := reflect.ValueOf(c)
	var out []console.Setting
	for i, key := range configKeys {
		f := v.Field(i)
		if key == "" || f.Kind() == reflect.Map {
			continue
		}
		val := fmt.Sprint(f.Interface())
		if f.Kind() == reflect.Slice {
			parts := make([]string, f.Len())
			for j := range parts {
				parts[j] = fmt.Sprint(f.Index(j).Interface())
			}
			val = strings.Join(parts, ",")
		}
		if key == "server_url" {
			val = redact(val)
		}
		out = append(out, console.Setting{Key: key, Value: val})
	}
	return out
}

// bouncerSettings are the settings whose PgBouncer names differ from
// qprouter's, under PgBouncer's names and in its units (whole seconds),
// for tools that read SHOW CONFIG by those names (pgbouncer_exporter reads
// max_client_conn).
func bouncerSettings(c Config) []console.Setting {
	secs := func(d time.Duration) string { return strconv.FormatInt(int64(d/time.Second), 10) }
	host, port, _ := net.SplitHostPort(c.Listen)
	return []console.Setting{
		{Key: "max_client_conn", Value: strconv.Itoa(c.MaxClients), Changeable: true},
		{Key: "default_pool_size", Value: strconv.Itoa(c.PoolSize), Changeable: true},
		{Key: "min_pool_size", Value: strconv.Itoa(c.MinIdle), Changeable: true},
		{Key: "max_prepared_statements", Value: strconv.Itoa(c.PreparedPerServer), Changeable: true},
		{Key: "server_idle_timeout", Value: secs(c.IdleTimeout), Changeable: true},
		{Key: "server_lifetime", Value: secs(c.MaxLifetime), Changeable: true},
		{Key: "server_check_delay", Value: secs(c.HealthCheckAfter), Changeable: true},
		{Key: "query_wait_timeout", Value: secs(c.AcquireTimeout), Changeable: true},
		{Key: "server_reset_query", Value: c.ResetQuery, Changeable: true},
		{Key: "listen_addr", Value: host},
		{Key: "listen_port", Value: port},
	}
}

// pauseDatabase pauses or resumes the pools of database, every pool when
// it is "".
func (s *Server) pauseDatabase(database string, pause bool) error {
	if database == "" {
		if pause {
			return s.proxy.Pause()
		}
		s.proxy.Resume()
		return nil
	}
	found := false
	for _, p := range s.proxy.Pools() {
		if p.Database != database {
			continue
		}
		found = true
		name := pool.NameOf(p.Database, p.User)
		var err error
		if pause {
			err = s.proxy.PausePool(name)
		} else {
			err = s.proxy.ResumePool(name)
		}
		if err != nil {
			return err
		}
	}
	if !found {
		return noPoolOf(database)
	}
	return nil
}

func noPoolOf(database string) error {
	return fmt.Errorf("no pool of database %q (qprouter pauses the pools a database has)", database)
}

// pauseDatabaseUndoable is pauseDatabase's pause, with a function that
// undoes only what it changed (a PAUSE its client cancels while it
// waits).
func (s *Server) pauseDatabaseUndoable(database string) (func(), error) {
	if database == "" {
		return s.proxy.PauseUndoable()
	}
	var undos []func()
	undo := func() {
		for i := len(undos) - 1; i >= 0; i-- {
			undos[i]()
		}
	}
	for _, p := range s.proxy.Pools() {
		if p.Database != database {
			continue
		}
		u, err := s.proxy.PausePoolUndoable(pool.NameOf(p.Database, p.User))
		if err != nil {
			undo()
			return nil, err
		}
		undos = append(undos, u)
	}
	if len(undos) == 0 {
		return nil, noPoolOf(database)
	}
	return undo, nil
}

// consoleHooks adds the console's counters to the proxy's hooks, after
// those already set.
func (s *Server) consoleHooks(o *proxy.Options) {
	st := s.stats
	onQuery, onAcquire := o.OnQuery, o.OnAcquire
	o.OnQuery = func(e proxy.QueryEvent) {
		st.query(e.Pool, e.Duration)
		if onQuery != nil {
			onQuery(e)
		}
	}
	o.OnAcquire = func(pool string, wait time.Duration, err error) {
		st.wait(pool, wait)
		if onAcquire != nil {
			onAcquire(pool, wait, err)
		}
	}
	o.OnTransaction = st.transaction
	o.PoolBytes = st.bytes
	o.ConsoleDatabase = s.opts.Config.ConsoleDatabase
	o.Console = s.serveConsole
	o.OnUnknownCancel = s.consoleCancel
}

// shutdown is the console's SHUTDOWN: Serve drains and returns, as at
// SIGTERM.
func (s *Server) shutdown() {
	s.mu.Lock()
	stop := s.stop
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}
