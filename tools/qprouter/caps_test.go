package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// TestConnectionCaps runs qprouter in session and in transaction mode
// (clients hold their servers with BEGIN) with PgBouncer's caps across
// pools and its reserve pool, from the config file:
//   - template1 may have one server connection whatever the user
//     (max_db_connections): a client of another user waits, and times out
//     naming the cap; once the first client left, its idle server
//     connection is closed for the other user's pool; a client waiting on
//     the cap gets in when the holder leaves.
//   - postgres as postgres has one connection and one in reserve after
//     300 ms: a second client gets a second server after that wait.
//   - /api/pools shows the counts and caps.
func TestConnectionCaps(t *testing.T) {
	c := pgtest.Shared(t)
	serverExec(t, c.URL(), "DROP ROLE IF EXISTS caps_app", "CREATE ROLE caps_app LOGIN")
	for _, mode := range []string{"session", "transaction"} {
		t.Run(mode, func(t *testing.T) { testConnectionCaps(t, c.URL(), mode) })
	}
}

func testConnectionCaps(t *testing.T, serverURL, mode string) {
	bg := context.Background()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "qprouter.toml")
	write(t, cfgPath, `pool_mode = "`+mode+`"
pool_size = 4
[pools.template1]
max_db_connections = 1
acquire_timeout = "1s"
[pools."postgres/postgres"]
pool_size = 1
reserve_pool_size = 1
reserve_pool_timeout = "300ms"
`)
	adminAddr := freeAddr(t)
	url, stop := startRouter(t, serverURL, "--config", cfgPath, "--admin", adminAddr)
	defer stop()
	connect := func(user, db string) (*pgx.Conn, error) {
		u := strings.Replace(strings.Replace(url, "/postgres?", "/"+db+"?", 1), "postgres@", user+"@", 1)
		return pgx.Connect(bg, u)
	}
	// who runs a query and returns the server's user and process.
	type server struct {
		user string
		pid  int
	}
	// who begins a transaction (so that it keeps its server in
	// transaction mode too) and returns the server's user and process.
	who := func(cn *pgx.Conn) (s server, err error) {
		if _, err := cn.Exec(bg, "BEGIN"); err != nil {
			return s, err
		}
		err = cn.QueryRow(bg, "SELECT current_user::text, pg_backend_pid()").Scan(&s.user, &s.pid)
		return s, err
	}

	// One template1 connection, held by postgres: caps_app waits 1 s (the
	// table's acquire_timeout; the test's flag sets 30 s for the others).
	holder, err := connect("postgres", "template1")
	if err != nil {
		t.Fatal(err)
	}
	first, err := who(holder)
	if err != nil {
		t.Fatal(err)
	}
	_, err = func() (server, error) {
		cn, err := connect("caps_app", "template1")
		if err != nil {
			return server{}, err
		}
		defer cn.Close(bg)
		return who(cn)
	}()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "53300" || !strings.Contains(pe.Message, "max_db_connections of database template1: 1 reached") {
		t.Fatalf("caps_app on template1 while postgres holds its one connection: %v, want 53300 naming the cap", err)
	}

	// The holder leaves: its server goes idle in postgres's pool, and is
	// closed when caps_app needs one.
	holder.Close(bg)
	app, err := connect("caps_app", "template1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := who(app)
	if err != nil || got.user != "caps_app" || got.pid == first.pid {
		t.Fatalf("caps_app after postgres left: %+v, %v", got, err)
	}

	// postgres waits on the cap; caps_app leaving lets it in.
	done := make(chan error, 1)
	go func() {
		cn, err := connect("postgres", "template1")
		if err == nil {
			var s server
			s, err = who(cn)
			if err == nil && s.user != "postgres" {
				err = errors.New("runs as " + s.user)
			}
			cn.Close(bg)
		}
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	app.Close(bg)
	if err := <-done; err != nil {
		t.Fatalf("postgres waiting on template1's cap: %v", err)
	}

	// The reserve: a second postgres client gets a second server after
	// 300 ms.
	a, err := connect("postgres", "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(bg)
	sa, err := who(a)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	b, err := connect("postgres", "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(bg)
	sb, err := who(b)
	if err != nil || sb.pid == sa.pid {
		t.Fatalf("second client: %+v %v (first %+v)", sb, err, sa)
	}
	if d := time.Since(t0); d < 250*time.Millisecond {
		t.Errorf("reserve connection after %s, before reserve_pool_timeout", d)
	}

	resp, err := http.Get("http://" + adminAddr + "/api/pools")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var pools struct {
		Pools []struct {
			Name             string `json:"name"`
			MaxSize          int    `json:"max_size"`
			Reserve          int    `json:"reserve_size"`
			Active           int    `json:"active"`
			DBConnections    int    `json:"db_connections"`
			MaxDBConnections int    `json:"max_db_connections"`
		} `json:"pools"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&pools); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, p := range pools.Pools {
		switch p.Name {
		case "postgres/postgres":
			seen++
			if p.MaxSize != 1 || p.Reserve != 1 || p.Active != 2 || p.MaxDBConnections != 0 {
				t.Errorf("/api/pools %s: %+v", p.Name, p)
			}
		case "template1/postgres", "template1/caps_app":
			seen++
			if p.MaxDBConnections != 1 || p.DBConnections > 1 {
				t.Errorf("/api/pools %s: %+v", p.Name, p)
			}
		}
	}
	if seen != 3 {
		t.Errorf("/api/pools: %+v", pools.Pools)
	}
}

// TestClientCaps runs qprouter in both modes with PgBouncer's client caps
// across pools: at most two clients per database (max_db_client_connections,
// five for template1) and one for the user ccap_app
// (max_user_client_connections in its "*/user" table). One over a cap is
// refused at login naming it (53300); a client leaving makes room;
// /api/pools shows the counts and caps.
func TestClientCaps(t *testing.T) {
	c := pgtest.Shared(t)
	serverExec(t, c.URL(), "DROP ROLE IF EXISTS ccap_app", "CREATE ROLE ccap_app LOGIN")
	for _, mode := range []string{"session", "transaction"} {
		t.Run(mode, func(t *testing.T) {
			bg := context.Background()
			cfgPath := filepath.Join(t.TempDir(), "qprouter.toml")
			write(t, cfgPath, `pool_mode = "`+mode+`"
max_db_client_connections = 2
[pools.template1]
max_db_client_connections = 5
[pools."*/ccap_app"]
max_user_client_connections = 1
`)
			adminAddr := freeAddr(t)
			url, stop := startRouter(t, c.URL(), "--config", cfgPath, "--admin", adminAddr)
			defer stop()
			connect := func(user, db string) (*pgx.Conn, error) {
				u := strings.Replace(strings.Replace(url, "/postgres?", "/"+db+"?", 1), "postgres@", user+"@", 1)
				conn, err := pgx.Connect(bg, u)
				if err == nil {
					t.Cleanup(func() { conn.Close(bg) })
					_, err = conn.Exec(bg, "SELECT 1")
				}
				return conn, err
			}
			refused := func(err error, message string) {
				t.Helper()
				var pe *pgconn.PgError
				if !errors.As(err, &pe) || pe.Code != "53300" || pe.Message != message {
					t.Errorf("got %v, want 53300 %q", err, message)
				}
			}
			first, err := connect("postgres", "postgres")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := connect("postgres", "postgres"); err != nil {
				t.Fatal(err)
			}
			refused(second(connect("postgres", "postgres")), `qprouter: too many clients of database "postgres" (max_db_client_connections 2)`)
			if _, err := connect("postgres", "template1"); err != nil {
				t.Errorf("another database: %v", err)
			}
			if _, err := connect("ccap_app", "template1"); err != nil {
				t.Errorf("ccap_app's first client: %v", err)
			}
			refused(second(connect("ccap_app", "template1")), `qprouter: too many clients of user "ccap_app" (max_user_client_connections 1)`)
			resp, err := http.Get("http://" + adminAddr + "/api/pools")
			if err != nil {
				t.Fatal(err)
			}
			var pools struct {
				Pools []struct {
					Name           string `json:"name"`
					DBClients      int    `json:"db_clients"`
					MaxDBClients   int    `json:"max_db_client_connections"`
					UserClients    int    `json:"user_clients"`
					MaxUserClients int    `json:"max_user_client_connections"`
				} `json:"pools"`
			}
			err = json.NewDecoder(resp.Body).Decode(&pools)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][4]int{"postgres/postgres": {2, 2, 3, 0}, "template1/postgres": {2, 5, 3, 0}, "template1/ccap_app": {2, 5, 1, 1}}
			for _, p := range pools.Pools {
				if w, ok := want[p.Name]; ok {
					delete(want, p.Name)
					if got := [4]int{p.DBClients, p.MaxDBClients, p.UserClients, p.MaxUserClients}; got != w {
						t.Errorf("/api/pools %s: clients and caps %v, want %v", p.Name, got, w)
					}
				}
			}
			if len(want) > 0 {
				t.Errorf("/api/pools lacks %v: %+v", want, pools.Pools)
			}
			first.Close(bg)
			deadline := time.Now().Add(5 * time.Second)
			for {
				_, err := connect("postgres", "postgres")
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("a client left, yet: %v", err)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// second is a two-value call's error.
func second[T any](_ T, err error) error { return err }
