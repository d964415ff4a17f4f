package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// TestPerPoolSettings runs one qprouter whose config file gives one
// database a pool mode and size of its own: template1 in session mode
// with one server connection (a second client waits and times out while
// the first is connected), postgres as user postgres in transaction mode
// with one server connection (two connected clients share it), and
// /api/pools reports each pool's mode and size. With transaction mode at
// the top level, with and without the event loop (which then accepts every
// client and hands session-mode ones to goroutines), and with session mode
// at the top level and a table in transaction mode.
func TestPerPoolSettings(t *testing.T) {
	c := pgtest.Shared(t)
	// config gives template1 session mode and postgres/postgres
	// transaction mode, one of them from the top level (top), the other
	// from its table; template1's table sets size and mode (reloaded).
	config := func(top, template1 string, size int) string {
		other := "transaction"
		if top == "transaction" {
			other = "session"
		}
		text := fmt.Sprintf("pool_mode = %q\npool_size = 4\n[pools.template1]\npool_size = %d\nacquire_timeout = \"300ms\"\n", top, size)
		if template1 != "" {
			text += fmt.Sprintf("pool_mode = %q\n", template1)
		}
		text += "[pools.\"postgres/postgres\"]\npool_size = 1\n"
		if top == "session" {
			text += fmt.Sprintf("pool_mode = %q\n", other)
		}
		return text
	}
	for _, tc := range []struct {
		top  string
		loop bool
	}{{"transaction", true}, {"transaction", false}, {"session", true}} {
		top, loop := tc.top, tc.loop
		t.Run(fmt.Sprintf("%s,event-loop=%v", top, loop), func(t *testing.T) {
			dir := t.TempDir()
			cfgPath := filepath.Join(dir, "qprouter.toml")
			tmplMode := "session"
			if top == "session" {
				tmplMode = ""
			}
			write(t, cfgPath, config(top, tmplMode, 1))
			adminAddr := freeAddr(t)
			args := []string{"--config", cfgPath, "--admin", adminAddr, fmt.Sprintf("--event-loop=%v", loop)}
			url, stop := startRouter(t, c.URL(), args...)
			defer stop()
			bg := context.Background()
			connect := func(db string) (*pgx.Conn, error) {
				return pgx.Connect(bg, strings.Replace(url, "/postgres?", "/"+db+"?", 1))
			}
			pid := func(cn *pgx.Conn) (int, error) {
				var p int
				err := cn.QueryRow(bg, "SELECT pg_backend_pid()").Scan(&p)
				return p, err
			}

			// Transaction mode, one server connection: two clients share it.
			a, err := connect("postgres")
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close(bg)
			b, err := connect("postgres")
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close(bg)
			pa, errA := pid(a)
			pb, errB := pid(b)
			if errA != nil || errB != nil || pa != pb {
				t.Errorf("postgres/postgres (transaction, size 1): pids %d and %d (%v, %v), want one shared server", pa, pb, errA, errB)
			}

			// Session mode, one server connection: the second client waits
			// for the first one's server and times out after 300 ms.
			s1, err := connect("template1")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pid(s1); err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			err = func() error {
				s2, err := connect("template1")
				if err != nil {
					return err
				}
				defer s2.Close(bg)
				_, err = pid(s2)
				return err
			}()
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "53300" {
				t.Errorf("a second template1 client while the first holds the session's server: %v, want 53300", err)
			} else if d := time.Since(t0); d < 250*time.Millisecond {
				t.Errorf("the second client's wait: %v, want the pool's 300ms acquire timeout", d)
			}
			p1, _ := pid(s1)
			s1.Close(bg)
			s3, err := connect("template1")
			if err != nil {
				t.Fatal(err)
			}
			defer s3.Close(bg)
			if p3, err := pid(s3); err != nil || p3 != p1 {
				t.Errorf("template1 after the first client left: pid %d (%v), want its server %d", p3, err, p1)
			}

			// A session-mode client gets its server's notifications while
			// idle, as in a session of its own.
			if _, err := s3.Exec(bg, "LISTEN qp_pools"); err != nil {
				t.Fatal(err)
			}
			direct, err := pgx.Connect(bg, c.DBURL("template1"))
			if err != nil {
				t.Fatal(err)
			}
			defer direct.Close(bg)
			if _, err := direct.Exec(bg, "NOTIFY qp_pools, 'hello'"); err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(bg, 5*time.Second)
			n, err := s3.WaitForNotification(wctx)
			cancel()
			if err != nil || n.Channel != "qp_pools" || n.Payload != "hello" {
				t.Errorf("notification to an idle session-mode client: %+v, %v", n, err)
			}

			pools := func() map[string]string {
				var pools struct {
					Pools []struct {
						Name    string `json:"name"`
						Mode    string `json:"mode"`
						MaxSize int    `json:"max_size"`
					} `json:"pools"`
				}
				getJSON(t, "http://"+adminAddr+"/api/pools", &pools)
				got := map[string]string{}
				for _, p := range pools.Pools {
					got[p.Name] = fmt.Sprintf("%s %d", p.Mode, p.MaxSize)
				}
				return got
			}
			if got := pools(); got["template1/postgres"] != "session 1" || got["postgres/postgres"] != "transaction 1" {
				t.Errorf("/api/pools: %v, want template1/postgres session 1, postgres/postgres transaction 1", got)
			}

			// A reload applies a table's new size and mode (for the
			// clients that connect after it: TestPoolModeReload).
			write(t, cfgPath, config(top, "transaction", 3))
			resp, err := http.Post("http://"+adminAddr+"/api/reload", "", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("reload: %s", resp.Status)
			}
			if got := pools(); got["template1/postgres"] != "transaction 3" || got["postgres/postgres"] != "transaction 1" {
				t.Errorf("/api/pools after a reload: %v, want template1/postgres transaction 3, postgres/postgres transaction 1", got)
			}
		})
	}
}

// TestPerPoolLayers: a pgbouncer.ini's per-database and per-user pool
// settings become per-pool tables, beneath the --config file's tables
// field by field; a value qprouter cannot use stops the start.
func TestPerPoolLayers(t *testing.T) {
	dir := t.TempDir()
	ini := filepath.Join(dir, "pgbouncer.ini")
	write(t, ini, "[databases]\n* = host=127.0.0.1 port=5433\nreports = host=127.0.0.1 port=5433 pool_size=3 pool_mode=session\n"+
		"[users]\nmigrator = pool_mode=session\n[pgbouncer]\nauth_type = trust\npool_mode = transaction\n")
	toml := filepath.Join(dir, "qprouter.toml")
	write(t, toml, "[pools.reports]\npool_size = 2\nacquire_timeout = \"1s\"\n")
	cfg, _, _, _, err := parse([]string{"--pgbouncer-ini", ini, "--config", toml}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	r, m := cfg.Pools["reports"], cfg.Pools["*/migrator"]
	if len(cfg.Pools) != 2 || r.PoolSize == nil || *r.PoolSize != 2 || r.PoolMode == nil || *r.PoolMode != "session" ||
		r.AcquireTimeout == nil || *r.AcquireTimeout != time.Second || m.PoolMode == nil || *m.PoolMode != "session" || m.PoolSize != nil {
		t.Errorf("pools: %+v", cfg.Pools)
	}
	write(t, ini, "[databases]\nreports = host=127.0.0.1 port=5433 pool_mode=batch\n[pgbouncer]\nauth_type = trust\n")
	if _, _, _, _, err := parse([]string{"--pgbouncer-ini", ini}, io.Discard, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "[databases] reports: pool_mode=batch") {
		t.Errorf("a bad mode for one database: %v", err)
	}
	write(t, ini, "[databases]\nreports = host=127.0.0.1 port=5433 pool_mode=statement\n[pgbouncer]\nauth_type = trust\n")
	if cfg, _, _, _, err := parse([]string{"--pgbouncer-ini", ini}, io.Discard, io.Discard); err != nil || cfg.Pools["reports"].PoolMode == nil || *cfg.Pools["reports"].PoolMode != "statement" {
		t.Errorf("statement mode for one database: %+v %v", cfg.Pools, err)
	}
	write(t, toml, "[pools.reports]\npool_sise = 2\n")
	if _, _, _, _, err := parse([]string{"--config", toml, "--server-url", "postgres://x@127.0.0.1:1/x"}, io.Discard, io.Discard); err == nil ||
		!strings.Contains(err.Error(), `unknown per-pool settings: pools."reports": pool_sise`) {
		t.Errorf("misspelt per-pool key: %v", err)
	}
}
