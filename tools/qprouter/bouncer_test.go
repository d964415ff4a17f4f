package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxyserver"
)

// bouncerINI is a PgBouncer setup as Debian ships it (trimmed), with a
// database entry, an auth file and transaction pooling.
const bouncerINI = `;;; PgBouncer configuration file
[databases]
appdb = host=127.0.0.1 port=%[1]d dbname=appdb
;; fallback connect string
* = host=127.0.0.1 port=%[1]d

[users]

[pgbouncer]
logfile = /var/log/postgresql/pgbouncer.log
pidfile = /var/run/postgresql/pgbouncer.pid
listen_addr = 127.0.0.1
listen_port = %[2]s
unix_socket_dir = %[4]s
auth_type = md5
auth_file = %[3]s
admin_users = postgres
pool_mode = transaction
server_reset_query = DISCARD ALL
ignore_startup_parameters = extra_float_digits
max_client_conn = 200
default_pool_size = 4
min_pool_size = 1
server_lifetime = 1800
server_idle_timeout = 300
server_check_delay = 10
query_wait_timeout = 15
server_tls_sslmode = disable
`

// writeBouncer writes bouncerINI and its userlist.txt into dir for a
// server on port, listening on listenPort and on a Unix socket in dir.
func writeBouncer(t *testing.T, dir string, port int, listenPort string) string {
	users := filepath.Join(dir, "userlist.txt")
	write(t, users, `"postgres" "secret"`+"\n"+`"app" "md5`+"0123456789abcdef0123456789abcdef"+`"`+"\n")
	ini := filepath.Join(dir, "pgbouncer.ini")
	write(t, ini, fmt.Sprintf(bouncerINI, port, listenPort, users, dir))
	return ini
}

// The settings a pgbouncer.ini gives, and what flags, environment and
// --config put above it.
func TestBouncerConfig(t *testing.T) {
	dir := t.TempDir()
	ini := writeBouncer(t, dir, 5433, "6543")
	cfg, notes, _, _, err := parse([]string{"--pgbouncer-ini", ini}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := proxyserver.Config{
		Listen: "127.0.0.1:6543", UnixSocketDir: dir, UnixSocketMode: "0777", ServerURL: "postgres://127.0.0.1:5433/?sslmode=disable", PoolMode: "transaction",
		PoolSize: 4, MinIdle: 1, MaxClients: 200, AcquireTimeout: 15 * time.Second, IdleTimeout: 5 * time.Minute,
		MaxLifetime: 30 * time.Minute, HealthCheckAfter: 10 * time.Second, ResetQuery: "DISCARD ALL", ReservePoolTimeout: 5 * time.Second, TCPDeferAccept: true,
		AuthFile: filepath.Join(dir, "userlist.txt"), AuthType: "md5", PreparedPerServer: 256, LoginTimeout: 10 * time.Second, ShutdownTimeout: 30 * time.Second, LogLevel: "info",
		EventLoop: true, IOURing: true, Databases: map[string]string{"appdb": "postgres://127.0.0.1:5433/appdb?sslmode=disable"},
		AdminUsers: []string{"postgres"}, ConsoleDatabase: "pgbouncer",
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("config:\n got %+v\nwant %+v", cfg, want)
	}
	var warned []string
	for _, n := range notes {
		warned = append(warned, n.Msg)
	}
	if w := strings.Join(warned, "\n"); !strings.Contains(w, "logfile = /var/log/postgresql/pgbouncer.log ignored") || !strings.Contains(w, "pidfile = /var/run/postgresql/pgbouncer.pid ignored") || strings.Contains(w, "admin_users") {
		t.Errorf("notes:\n%s", w)
	}

	// Client TLS, required.
	tlsINI := filepath.Join(dir, "tls.ini")
	write(t, tlsINI, readFile(t, ini)+"client_tls_sslmode = require\nclient_tls_cert_file = /etc/ssl/c.pem\nclient_tls_key_file = /etc/ssl/k.pem\n")
	if cfg, _, _, _, err := parse([]string{"--pgbouncer-ini", tlsINI}, io.Discard, io.Discard); err != nil || !cfg.RequireTLS || cfg.TLSCert != "/etc/ssl/c.pem" || cfg.TLSKey != "/etc/ssl/k.pem" {
		t.Errorf("client TLS: %v %+v", err, cfg)
	}

	// Flags > environment > --config > pgbouncer.ini; the file named by
	// the environment or by --config.
	toml := filepath.Join(dir, "qprouter.toml")
	write(t, toml, "pool_size = 6\nmin_idle = 2\nmax_clients = 7\n")
	t.Setenv("QPROUTER_MIN_IDLE", "3")
	t.Setenv("QPROUTER_PGBOUNCER_INI", ini)
	cfg, _, _, _, err = parse([]string{"--config", toml, "--max-clients", "8"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PoolSize != 6 || cfg.MinIdle != 3 || cfg.MaxClients != 8 || cfg.PoolMode != "transaction" || cfg.IdleTimeout != 5*time.Minute {
		t.Errorf("precedence: %+v", cfg)
	}
	os.Unsetenv("QPROUTER_PGBOUNCER_INI") // restored by t.Setenv
	write(t, toml, fmt.Sprintf("pgbouncer_ini = %q\n", ini))
	if cfg, _, _, _, err = parse([]string{"--config", toml}, io.Discard, io.Discard); err != nil || cfg.PoolSize != 4 {
		t.Errorf("pgbouncer_ini in --config: %v %+v", err, cfg)
	}
}

// The event loop and its io_uring are on unless a flag, the environment
// or the config file turns them off.
func TestEventLoopDefault(t *testing.T) {
	t.Setenv("QPROUTER_SERVER_URL", "postgres://127.0.0.1:5432/")
	for _, sw := range []struct {
		flag, env, key string
		get            func(proxyserver.Config) bool
	}{
		{"event-loop", "QPROUTER_EVENT_LOOP", "event_loop", func(c proxyserver.Config) bool { return c.EventLoop }},
		{"io-uring", "QPROUTER_IO_URING", "io_uring", func(c proxyserver.Config) bool { return c.IOURing }},
	} {
		toml := filepath.Join(t.TempDir(), "qprouter.toml")
		write(t, toml, sw.key+" = false\n")
		for _, tc := range []struct {
			args []string
			env  string
			want bool
		}{
			{nil, "", true},
			{[]string{"--no-" + sw.flag}, "", false},
			{nil, "false", false},
			{nil, "0", false},
			{[]string{"--config", toml}, "", false},
			{[]string{"--config", toml, "--" + sw.flag}, "", true},
			{[]string{"--config", toml}, "true", true},
		} {
			if tc.env != "" {
				t.Setenv(sw.env, tc.env)
			} else {
				os.Unsetenv(sw.env)
			}
			cfg, _, _, _, err := parse(tc.args, io.Discard, io.Discard)
			if err != nil || sw.get(cfg) != tc.want {
				t.Errorf("%v with %s=%q: %s %v, %v; want %v", tc.args, sw.env, tc.env, sw.key, sw.get(cfg), err, tc.want)
			}
		}
		os.Unsetenv(sw.env)
	}
}

// Refusals name the file and the key or entry, exit 2; a refused value
// replaced from above is no error.
func TestBouncerErrors(t *testing.T) {
	dir := t.TempDir()
	ini := writeBouncer(t, dir, 5433, "6543")
	bad := func(name, from, to string) string {
		p := filepath.Join(dir, name)
		write(t, p, strings.Replace(readFile(t, ini), from, to, 1))
		return p
	}
	batch := bad("batch.ini", "pool_mode = transaction", "pool_mode = batch")
	twoHosts := bad("hosts.ini", "* = host=127.0.0.1", "* = host=10.1.1.1,10.1.1.2 load_balance_hosts=random")
	appHosts := bad("apphosts.ini", "appdb = host=127.0.0.1", "appdb = load_balance_hosts=random host=127.0.0.1")
	missing := filepath.Join(dir, "missing.ini")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--pgbouncer-ini", batch}, "qprouter: pgbouncer.ini " + batch + ": pool_mode = batch: want session, transaction or statement\n"},
		{[]string{"--pgbouncer-ini", twoHosts}, "qprouter: pgbouncer.ini " + twoHosts + ": [databases] *: load_balance_hosts=random: want round-robin or disable (or give --server-url)\n"},
		{[]string{"--pgbouncer-ini", appHosts}, "qprouter: pgbouncer.ini " + appHosts + ": [databases] appdb: load_balance_hosts=random: want round-robin or disable\n"},
		{[]string{"--pgbouncer-ini", missing}, "qprouter: pgbouncer.ini: open " + missing + ": no such file or directory\n"},
	} {
		var errb bytes.Buffer
		if code := run(context.Background(), c.args, io.Discard, &errb, nil, nil); code != exitUsage || errb.String() != c.msg {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errb.String(), c.msg)
		}
	}
	for _, args := range [][]string{
		{"--pgbouncer-ini", batch, "--pool-mode", "session"},
		{"--pgbouncer-ini", twoHosts, "--server-url", "postgres://10.1.1.1:5433/"},
	} {
		if _, _, _, _, err := parse(args, io.Discard, io.Discard); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// qprouter started from a pgbouncer.ini alone serves a client of its
// auth file.
func TestBouncerServe(t *testing.T) {
	c := pgtest.Shared(t)
	_, port, err := net.SplitHostPort(freeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	ini := writeBouncer(t, t.TempDir(), c.Port, port)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	addrc := make(chan string, 1)
	codec := make(chan int, 1)
	var logs syncBuf
	go func() {
		codec <- run(ctx, []string{"--pgbouncer-ini", ini}, &logs, &logs, nil, func(a string) { addrc <- a })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case code := <-codec:
		t.Fatalf("exited %d: %s", code, logs.String())
	}
	if addr != "127.0.0.1:"+port {
		t.Errorf("listening on %s, want port %s", addr, port)
	}
	bg := context.Background()
	conn, err := pgx.Connect(bg, "postgres://postgres:secret@"+addr+"/postgres?sslmode=disable")
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, logs.String())
	}
	defer conn.Close(bg)
	var n int
	if err := conn.QueryRow(bg, "select $1::int + 1", 41).Scan(&n); err != nil || n != 42 {
		t.Fatalf("query: %d %v", n, err)
	}
	if _, err := pgx.Connect(bg, "postgres://postgres:wrong@"+addr+"/postgres?sslmode=disable"); err == nil || !strings.Contains(err.Error(), "28P01") {
		t.Errorf("wrong password: %v", err)
	}
	// psql as a PgBouncer user runs it: through the Unix socket of
	// unix_socket_dir, with the password.
	psql := exec.Command("psql", "-X", "-Atq", "-h", filepath.Dir(ini), "-p", port, "-U", "postgres", "-d", "postgres", "-c", "SELECT 40 + 2")
	psql.Env = append(os.Environ(), "PGPASSWORD=secret")
	if out, err := psql.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "42" {
		t.Errorf("psql through unix_socket_dir: %q %v", out, err)
	}
	if l := logs.String(); !strings.Contains(l, "settings from pgbouncer.ini "+ini) || !strings.Contains(l, "logfile = /var/log/postgresql/pgbouncer.log ignored") {
		t.Errorf("log:\n%s", l)
	}
	stop()
	if code := <-codec; code != exitOK {
		t.Fatalf("exit %d: %s", code, logs.String())
	}
}
