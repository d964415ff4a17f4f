package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

func TestMain(m *testing.M) {
	if os.Getenv("QPROUTER_TEST_MAIN") == "1" { // the process TestSignals starts
		os.Args = append([]string{"qprouter"}, strings.Fields(os.Getenv("QPROUTER_TEST_ARGS"))...)
		main()
		return
	}
	pgtest.Main(m)
}

// The real main's signal wiring: SIGHUP reloads, SIGTERM drains and exits 0.
func TestSignals(t *testing.T) {
	var logs syncBuf
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "QPROUTER_TEST_MAIN=1",
		"QPROUTER_TEST_ARGS=--server-url postgres://nobody@127.0.0.1:1/x --listen 127.0.0.1:0")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor := func(what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(logs.String(), what) {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("no %q in:\n%s", what, logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("qprouter listening")
	cmd.Process.Signal(syscall.SIGHUP)
	waitFor("reloaded")
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, logs.String())
	}
	if !strings.Contains(logs.String(), "stopped") {
		t.Errorf("no drain: %s", logs.String())
	}
}

// syncBuf is a goroutine-safe log sink.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// serverExec runs statements, in order on one connection, on the server at
// url (the test cluster, as its superuser).
func serverExec(t *testing.T, url string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for _, q := range stmts {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// loginAs connects with conn and checks that the server session runs as
// user.
func loginAs(conn, user string) error {
	ctx := context.Background()
	cn, err := pgx.Connect(ctx, conn)
	if err != nil {
		return err
	}
	defer cn.Close(ctx)
	var who string
	if err := cn.QueryRow(ctx, "SELECT current_user").Scan(&who); err != nil {
		return err
	}
	if who != user {
		return errors.New("server session runs as " + who)
	}
	return nil
}

func write(t *testing.T, path, text string) {
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, &out, &errb, nil, nil); code != exitOK || !strings.Contains(out.String(), "--pool-mode") {
		t.Errorf("--help: %d %q", code, out.String())
	}
	errb.Reset()
	if code := run(context.Background(), nil, &out, &errb, nil, nil); code != exitUsage || !strings.Contains(errb.String(), "--server-url is required") {
		t.Errorf("no server: %d %q", code, errb.String())
	}
	errb.Reset()
	if code := run(context.Background(), []string{"--server-url", "postgres://x", "--pool-mode", "batch"}, &out, &errb, nil, nil); code != exitUsage {
		t.Errorf("bad mode: %d %q", code, errb.String())
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "users.txt"), "\"alice\" secret\n")
	errb.Reset()
	if code := run(context.Background(), []string{"--server-url", "postgres://x", "--auth-file", filepath.Join(dir, "users.txt")}, &out, &errb, nil, nil); code != exitUsage || !strings.Contains(errb.String(), "users.txt:1") {
		t.Errorf("bad auth file: %d %q", code, errb.String())
	}
}

// qprouter end to end: config file, auth file, transaction mode, admin
// API, SIGHUP reload without dropping clients, SIGTERM drain and exit 0.
func TestServeReloadDrain(t *testing.T) {
	c := pgtest.Shared(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "qprouter.toml")
	users := filepath.Join(dir, "users.txt")
	adminAddr := freeAddr(t)
	write(t, users, `"postgres" "first"`+"\n")
	write(t, cfgPath, fmt.Sprintf("server_url = %q\npool_mode = \"transaction\"\npool_size = 2\nauth_file = %q\nadmin = %q\npprof = true\nshutdown_timeout = \"10s\"\n", c.URL(), users, adminAddr))

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	hup := make(chan os.Signal, 1)
	addrc := make(chan string, 1)
	var logs syncBuf
	codec := make(chan int, 1)
	go func() {
		codec <- run(ctx, []string{"--config", cfgPath, "--listen", "127.0.0.1:0"}, &logs, &logs, hup, func(a string) { addrc <- a })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case code := <-codec:
		t.Fatalf("exited %d: %s", code, logs.String())
	}
	url := func(pw string) string {
		return fmt.Sprintf("postgres://postgres:%s@%s/postgres?sslmode=disable", pw, addr)
	}
	bg := context.Background()

	conn, err := pgx.Connect(bg, url("first"))
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, logs.String())
	}
	defer conn.Close(bg)
	if _, err := pgx.Connect(bg, url("wrong")); err == nil || !strings.Contains(err.Error(), "28P01") {
		t.Errorf("wrong password: %v", err)
	}
	var n int
	if err := conn.QueryRow(bg, "select $1::int * 2", 21).Scan(&n); err != nil || n != 42 {
		t.Fatalf("query: %d %v", n, err)
	}

	// Admin API sees the pool.
	var pools struct {
		Pools []struct {
			Name    string `json:"name"`
			MaxSize int    `json:"max_size"`
		} `json:"pools"`
	}
	getJSON(t, "http://"+adminAddr+"/api/pools", &pools)
	if len(pools.Pools) != 1 || pools.Pools[0].MaxSize != 2 {
		t.Fatalf("pools: %+v", pools)
	}

	// Reload: new password and pool size; the open client stays.
	write(t, users, `"postgres" "second"`+"\n")
	write(t, cfgPath, strings.Replace(readFile(t, cfgPath), "pool_size = 2", "pool_size = 5", 1))
	hup <- syscall.SIGHUP
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "reloaded") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	getJSON(t, "http://"+adminAddr+"/api/pools", &pools)
	if pools.Pools[0].MaxSize != 5 {
		t.Errorf("after reload: %+v\n%s", pools, logs.String())
	}
	if _, err := pgx.Connect(bg, url("first")); err == nil {
		t.Error("old password still accepted after reload")
	}
	conn2, err := pgx.Connect(bg, url("second"))
	if err != nil {
		t.Fatalf("new password: %v", err)
	}
	defer conn2.Close(bg)
	if err := conn.QueryRow(bg, "select 1").Scan(&n); err != nil {
		t.Fatalf("client dropped by reload: %v", err)
	}

	// Metrics saw the queries.
	resp, err := http.Get("http://" + adminAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var mb bytes.Buffer
	mb.ReadFrom(resp.Body)
	resp.Body.Close()
	if !strings.Contains(mb.String(), "sqp_query_duration_seconds_count") || !strings.Contains(mb.String(), "sqp_pool_acquire_duration_seconds") {
		t.Errorf("metrics: %.300s", mb.String())
	}
	// The byte counters exist from the start, so each must have counted.
	for _, dir := range []string{"from_client", "to_client", "from_server", "to_server"} {
		series := `sqp_bytes_total{direction="` + dir + `"} `
		i := strings.Index(mb.String(), series)
		if i < 0 {
			t.Errorf("metrics: no %s", series)
			continue
		}
		if v := strings.Fields(mb.String()[i+len(series):])[0]; v == "0" {
			t.Errorf("metrics: %s0", series)
		}
	}
	// pprof = true serves the runtime's profiles beside them.
	resp, err = http.Get("http://" + adminAddr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	mb.Reset()
	mb.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(mb.String(), "proxy.(*Proxy).Serve") {
		t.Errorf("pprof: %d %.300s", resp.StatusCode, mb.String())
	}

	// Drain: a transaction under way finishes, then qprouter exits 0.
	tx, err := conn.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(bg, "select 1"); err != nil {
		t.Fatal(err)
	}
	stop()
	time.Sleep(200 * time.Millisecond)
	if _, err := tx.Exec(bg, "select 2"); err != nil {
		t.Fatalf("in-flight transaction cut: %v", err)
	}
	if err := tx.Commit(bg); err != nil {
		t.Fatalf("commit during drain: %v", err)
	}
	select {
	case code := <-codec:
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, logs.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not exit after drain")
	}
}

// TLS with a self-signed certificate, required.
func TestTLS(t *testing.T) {
	c := pgtest.Shared(t)
	dir := t.TempDir()
	writeCert(t, dir, 1)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	addrc := make(chan string, 1)
	codec := make(chan int, 1)
	var logs syncBuf
	go func() {
		codec <- run(ctx, []string{"--server-url", c.URL(), "--listen", "127.0.0.1:0", "--require-tls",
			"--tls-cert", filepath.Join(dir, "cert.pem"), "--tls-key", filepath.Join(dir, "key.pem")}, &logs, &logs, nil, func(a string) { addrc <- a })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case code := <-codec:
		t.Fatalf("exited %d: %s", code, logs.String())
	}
	bg := context.Background()
	conn, err := pgx.Connect(bg, "postgres://postgres@"+addr+"/postgres?sslmode=require")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRow(bg, "select 3").Scan(&n); err != nil || n != 3 {
		t.Fatalf("over TLS: %v", err)
	}
	conn.Close(bg)
	if _, err := pgx.Connect(bg, "postgres://postgres@"+addr+"/postgres?sslmode=disable"); err == nil {
		t.Error("plaintext accepted with --require-tls")
	}
	stop()
	if code := <-codec; code != exitOK {
		t.Fatalf("exit %d", code)
	}
}

func readFile(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
