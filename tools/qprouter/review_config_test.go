package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// rvStart runs qprouter with args (listening on a free port, with the
// admin API on another) until the test ends; it returns the client
// address, the admin address and the log.
func rvStart(t *testing.T, args ...string) (addr, adminAddr string, logs *syncBuf) {
	t.Helper()
	adminAddr = freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	codec := make(chan int, 1)
	logs = &syncBuf{}
	args = append([]string{"--listen", "127.0.0.1:0", "--admin", adminAddr, "--shutdown-timeout", "2s"}, args...)
	go func() { codec <- run(ctx, args, logs, logs, nil, func(a string) { addrc <- a }) }()
	select {
	case addr = <-addrc:
	case code := <-codec:
		cancel()
		t.Fatalf("exited %d: %s", code, logs.String())
	}
	t.Cleanup(func() {
		cancel()
		<-codec
	})
	return addr, adminAddr, logs
}

// rvReload is POST /api/reload; it returns the status code and body.
func rvReload(t *testing.T, adminAddr string) (int, string) {
	t.Helper()
	resp, err := http.Post("http://"+adminAddr+"/api/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A reload that drops the only password source in force (auth_user, the
// auth query) turns every client into a trusted one: a wrong password
// then logs in. The docs refuse exactly this for auth_file ("a lost key
// or an unset variable must not turn password checks off"); the auth
// query is the same check and is dropped without a word.
func TestConfigReviewReloadDropAuthUserTrustsEveryone(t *testing.T) {
	c := pgtest.Shared(t)
	serverExec(t, c.URL(), "DROP ROLE IF EXISTS zz_cfg_alice",
		"SET password_encryption = 'scram-sha-256'", "CREATE ROLE zz_cfg_alice LOGIN PASSWORD 'right'")
	cfgPath := filepath.Join(t.TempDir(), "qprouter.toml")
	write(t, cfgPath, fmt.Sprintf("server_url = %q\nauth_user = \"postgres\"\n", c.URL()))
	addr, adminAddr, logs := rvStart(t, "--config", cfgPath)
	ctx := context.Background()
	wrong := "postgres://zz_cfg_alice:wrong@" + addr + "/postgres?sslmode=disable"
	if _, err := pgx.Connect(ctx, wrong); err == nil || !strings.Contains(err.Error(), "28P01") {
		t.Fatalf("wrong password before the reload: %v\n%s", err, logs.String())
	}
	// The auth_user line is lost from the file (an edit, a template).
	write(t, cfgPath, fmt.Sprintf("server_url = %q\n", c.URL()))
	code, body := rvReload(t, adminAddr)
	cn, err := pgx.Connect(ctx, wrong)
	if err == nil {
		cn.Close(ctx)
		t.Errorf("after a reload that dropped auth_user (POST /api/reload: %d %s), a client with a wrong password logs in: every client is trusted", code, body)
	}
	if code == http.StatusOK {
		t.Errorf("POST /api/reload = 200 %s: a reload that turns password checks off should be refused, as for auth_file", body)
	}
}

// --auth-type any is refused beside --server-url, which "would serve other
// databases as whatever user a client names" without a password. A reload
// that switches the file from auth_type any to md5 (an auth file) and adds
// a server_url passes Check on the new values, then keeps auth_type any
// (fixed at start) and applies server_url: a client naming the superuser,
// with a wrong password, is served as the superuser.
func TestConfigReviewReloadAnyWithServerURL(t *testing.T) {
	c := pgtest.Shared(t)
	serverExec(t, c.URL(), "DROP ROLE IF EXISTS zz_cfg_forced", "CREATE ROLE zz_cfg_forced LOGIN")
	dir := t.TempDir()
	users := filepath.Join(dir, "users.txt")
	write(t, users, `"postgres" "s3cret"`+"\n")
	cfgPath := filepath.Join(dir, "qprouter.toml")
	write(t, cfgPath, fmt.Sprintf("auth_type = \"any\"\n[databases]\napp = \"postgres://zz_cfg_forced@127.0.0.1:%d/postgres\"\n", c.Port))
	addr, adminAddr, logs := rvStart(t, "--config", cfgPath)
	ctx := context.Background()
	wrong := "postgres://postgres:wrong@" + addr + "/postgres?sslmode=disable"
	if _, err := pgx.Connect(ctx, wrong); err == nil {
		t.Fatalf("before the reload a database without an entry was served:\n%s", logs.String())
	}
	write(t, cfgPath, fmt.Sprintf("auth_file = %q\nserver_url = %q\n[databases]\napp = \"postgres://zz_cfg_forced@127.0.0.1:%d/postgres\"\n", users, c.URL(), c.Port))
	code, body := rvReload(t, adminAddr)
	cn, err := pgx.Connect(ctx, wrong)
	if err == nil {
		defer cn.Close(ctx)
		var who string
		cn.QueryRow(ctx, "SELECT current_user").Scan(&who)
		t.Errorf("after the reload (POST /api/reload: %d %s) a client with a wrong password is served as %q: auth_type any kept beside a server_url\n%s",
			code, strings.TrimSpace(body), who, logs.String())
	}
}

// A reload that fails leaves the settings in force ("reload failed;
// keeping the old settings"). With a renewed certificate and a CA file
// that no longer loads, the reload fails on the CA file after it has
// already swapped the certificate in: new clients get the new
// certificate from a reload reported as failed.
func TestConfigReviewFailedReloadSwapsCertificate(t *testing.T) {
	c := pgtest.Shared(t)
	dir := t.TempDir()
	writeCert(t, dir, 1)
	issue(t, dir, "ca", "zz test CA", true, nil, nil)
	addr, adminAddr, logs := rvStart(t, "--server-url", c.URL(), "--tls-cert", filepath.Join(dir, "cert.pem"),
		"--tls-key", filepath.Join(dir, "key.pem"), "--tls-ca-file", filepath.Join(dir, "ca.pem"))
	ctx := context.Background()
	serial := func() int64 {
		t.Helper()
		cn, err := pgx.Connect(ctx, "postgres://postgres@"+addr+"/postgres?sslmode=require")
		if err != nil {
			t.Fatalf("%v\n%s", err, logs.String())
		}
		defer cn.Close(ctx)
		tc, ok := cn.PgConn().Conn().(*tls.Conn)
		if !ok {
			t.Fatalf("not TLS: %T", cn.PgConn().Conn())
		}
		return tc.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	if s := serial(); s != 1 {
		t.Fatalf("first certificate: serial %d", s)
	}
	writeCert(t, dir, 2)
	write(t, filepath.Join(dir, "ca.pem"), "no certificate here\n")
	code, body := rvReload(t, adminAddr)
	if code == http.StatusOK {
		t.Fatalf("reload with a CA file without a certificate: %d %s", code, body)
	}
	if s := serial(); s != 1 {
		t.Errorf("the reload failed (%d %s) yet new clients get the new certificate (serial %d), want the one in force (1)", code, strings.TrimSpace(body), s)
	}
}

// A value of the wrong type in the config file is refused naming its key
// (the [pools] tables refuse them so: `pools.app.pool_size ... TOML value
// has type float64; destination has type integer`). At the top level a
// fraction for a count is rounded without a word (pool_size = 1.5 serves
// with 2 connections, max_clients = 2.7 with 3), and a [databases] or
// [pools] table written as a plain value is ignored.
func TestConfigReviewWrongTypeRefused(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ text, key string }{
		{"pool_size = 1.5\n", "pool_size"},
		{"max_clients = 2.7\n", "max_clients"},
		{"databases = \"postgres://127.0.0.1:5433/\"\n", "databases"},
		{"pools = 3\n", "pools"},
	} {
		p := filepath.Join(dir, "qprouter.toml")
		write(t, p, "server_url = \"postgres://127.0.0.1:5432/\"\n"+c.text)
		cfg, _, _, _, err := parse([]string{"--config", p}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("config file with %q: err %v (pool_size %d, max_clients %d, databases %v, pools %v), want an error naming %s",
				strings.TrimSpace(c.text), err, cfg.PoolSize, cfg.MaxClients, cfg.Databases, cfg.Pools, c.key)
		}
	}
}

// Precedence is flags > environment > --config > --pgbouncer-ini, and
// `databases."*"` may stand for server_url. A --config file whose
// [databases] table gives the default server as "*" over a pgbouncer.ini
// whose [databases] has a `*` entry is refused as if the user had given
// both in one place ("databases."*" and server_url both name the default
// server"): the ini's `*` became server_url beneath the file, and the
// file's "*" does not replace it.
func TestConfigReviewStarOverBouncerINI(t *testing.T) {
	dir := t.TempDir()
	ini := filepath.Join(dir, "pgbouncer.ini")
	write(t, ini, "[databases]\n* = host=127.0.0.1 port=5432\n[pgbouncer]\nauth_type = trust\n")
	cfgPath := filepath.Join(dir, "qprouter.toml")
	write(t, cfgPath, "[databases]\n\"*\" = \"postgres://127.0.0.1:5433/\"\n")
	cfg, _, _, _, err := parse([]string{"--pgbouncer-ini", ini, "--config", cfgPath}, io.Discard, io.Discard)
	if err != nil {
		t.Fatalf("--config's databases.\"*\" over pgbouncer.ini's *: %v", err)
	}
	if got := cfg.Databases["*"] + cfg.ServerURL; !strings.Contains(got, ":5433") || strings.Contains(got, ":5432") {
		t.Errorf("default server: server_url %q, databases.\"*\" %q; want the --config file's (port 5433) alone", cfg.ServerURL, cfg.Databases["*"])
	}
}
