// The admin API and metrics over the proxy: pkg/admin does not import pkg/proxy, so this adapts.

package proxyserver

import (
	"context"
	"errors"
	"fmt"
	"github.com/qpkit/qpkit/pkg/pool"
	"time"

	"github.com/qpkit/qpkit/pkg/admin"
	"github.com/qpkit/qpkit/pkg/proxy"
	"github.com/qpkit/qpkit/pkg/route"
)

// newAdmin builds the admin server over s.proxy (set later by New).
func (s *Server) newAdmin() *admin.Server {
	return admin.New(admin.Options{
		Pools:     func() []admin.PoolStat { return poolStats(s.proxy) },
		Clients:   func() []admin.ClientStat { return clientStats(s.proxy) },
		Databases: s.databaseStats,
		Pause:     func(_ context.Context, name string) error { return pause(s.proxy, name, true) },
		Resume:    func(_ context.Context, name string) error { return pause(s.proxy, name, false) },
		Reload:    func(context.Context) error { return s.Reload() },
		LoopHandBacks: func() map[string]int64 {
			if p := s.proxy; p != nil {
				return p.LoopHandBacks()
			}
			return nil
		},
		FenceWaits: func() int64 {
			if p := s.proxy; p != nil {
				return p.FenceWaits()
			}
			return 0
		},
		CancelledWaits: func() int64 {
			if p := s.proxy; p != nil {
				return p.CancelledWaits()
			}
			return 0
		},
		// A proxy that drains refuses new clients: a load balancer's
		// probe must see that, not "ok".
		Health: func() error {
			if p := s.proxy; p != nil && p.Draining() {
				return errors.New("draining: shutting down, new clients are refused")
			}
			return nil
		},
		Pprof: s.cfg.Pprof,
	})
}

// observe points the proxy's hooks at the admin server's metrics.
func (s *Server) observe(o *proxy.Options) {
	adm := s.admin
	o.OnClientRead, o.OnClientWrite = adm.Bytes(admin.FromClient), adm.Bytes(admin.ToClient)
	o.OnQuery = func(e proxy.QueryEvent) {
		adm.ObserveQuery(e.Pool, "primary", e.SQL, e.Duration, e.Rows, e.SQLState)
	}
	o.OnAcquire = func(pool string, wait time.Duration, err error) {
		adm.ObserveAcquire(pool, wait)
		if err == nil { // a failed acquire picked no backend
			adm.RoutingDecision(pool, "primary")
		}
	}
	o.OnCacheOp = adm.CacheOp
	o.OnReplay = adm.SettingsReplay
	o.OnClient = func(connected bool) {
		if connected {
			adm.ClientConnected()
		} else {
			adm.ClientDisconnected()
		}
	}
}

// pause pauses or resumes the pool named "database/user", or every pool
// when name is empty; an unknown name wraps admin.ErrUnknownPool (404).
func pause(p *proxy.Proxy, name string, pause bool) error {
	var err error
	switch {
	case name == "" && pause:
		err = p.Pause()
	case name == "":
		p.Resume()
	case pause:
		err = p.PausePool(name)
	default:
		err = p.ResumePool(name)
	}
	if errors.Is(err, proxy.ErrUnknownPool) {
		return fmt.Errorf("%w: %s", admin.ErrUnknownPool, name)
	}
	if errors.Is(err, proxy.ErrDraining) {
		return fmt.Errorf("%w: %v", admin.ErrUnavailable, err)
	}
	return err
}

// poolWaits is how many clients of a pool wait and the longest wait.
type poolWaits struct {
	n       int
	longest time.Duration
}

// waitingClients counts, per pool name, the clients waiting for a server
// or for a paused pool to resume: those held by a pause never reach the
// pool's own queue, which is all the pool's Waiting and MaxWait see.
func waitingClients(p *proxy.Proxy) map[string]poolWaits {
	out := map[string]poolWaits{}
	now := time.Now()
	for _, c := range p.Clients() {
		if c.State != "waiting" {
			continue
		}
		k := c.Pool
		w := out[k]
		w.n++
		if !c.WaitingSince.IsZero() {
			w.longest = max(w.longest, now.Sub(c.WaitingSince))
		}
		out[k] = w
	}
	return out
}

func poolStats(p *proxy.Proxy) []admin.PoolStat {
	var out []admin.PoolStat
	waits := waitingClients(p)
	for _, s := range p.Pools() {
		name := pool.NameOf(s.Database, s.User)
		s.Waiting = max(s.Waiting, waits[name].n)
		out = append(out, admin.PoolStat{Name: name, Database: s.Database, User: s.User, Mode: s.Mode,
			Active: s.Active, Idle: s.Idle, Waiting: s.Waiting, MaxSize: s.Size, Paused: s.Paused,
			Reserve: s.Reserve, DBConnections: s.DBConnections, MaxDBConnections: s.MaxDBConnections,
			UserConnections: s.UserConnections, MaxUserConnections: s.MaxUserConnections,
			DBClients: s.DBClients, MaxDBClients: s.MaxDBClients, UserClients: s.UserClients, MaxUserClients: s.MaxUserClients})
	}
	return out
}

func clientStats(p *proxy.Proxy) []admin.ClientStat {
	var out []admin.ClientStat
	for _, c := range p.Clients() {
		// The cancel key's PID: unique among connected clients, what the
		// console's SHOW CLIENTS calls ptr and KILL_CLIENT takes.
		out = append(out, admin.ClientStat{ID: fmt.Sprintf("0x%08x", c.KeyPID), Pool: c.Pool, User: c.User, Database: c.Database,
			Application: c.Application, Addr: c.Addr, State: c.State, TLS: c.TLS, Pinned: c.Pinned, ConnectedAt: c.ConnectedSince})
	}
	return out
}

// databaseStats lists the database entries, then the default server as "*".
func (s *Server) databaseStats() []admin.DatabaseStat {
	stat := func(name string, tg *route.Target) admin.DatabaseStat {
		lb := "round-robin"
		if tg.InOrder() {
			lb = "disable"
		}
		return admin.DatabaseStat{Name: name, Server: redact(tg.URL), Hosts: tg.Hosts(), Database: tg.Database, ForceUser: tg.User,
			LoadBalanceHosts: lb, ConnectQuery: tg.ConnectQuery()}
	}
	var out []admin.DatabaseStat
	for _, name := range s.targets.Names() {
		tg, _ := s.targets.For(name)
		out = append(out, stat(name, tg))
	}
	if tg := s.targets.Default(); tg != nil {
		out = append(out, stat("*", tg))
	}
	return out
}
