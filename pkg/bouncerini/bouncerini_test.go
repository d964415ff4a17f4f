package bouncerini

import (
	"errors"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// Debian's pgbouncer.ini with a [databases] entry, transaction mode and
// a few changed settings.
func TestBouncerDebian(t *testing.T) {
	s, err := Load("testdata/pgbouncer.ini")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"listen":              "localhost:6432",
		"server_url":          "postgres://db1.internal:5433/?connect_timeout=15&sslmode=require",
		"pool_mode":           "transaction",
		"pool_size":           "25",
		"min_idle":            "5",
		"max_clients":         "500",
		"prepared_per_server": "100",
		"idle_timeout":        "10m0s",
		"max_lifetime":        "30m0s",
		"health_check_after":  "30s",
		"acquire_timeout":     "2m0s",
		"reset_query":         "DISCARD ALL",
		"auth_file":           "/etc/pgbouncer/userlist.txt",
		"unix_socket_dir":     "/var/run/postgresql",
		"auth_type":           "scram-sha-256",
		"admin_users":         "postgres",
	}
	if !maps.Equal(s.Values, want) {
		t.Errorf("values:\n got %v\nwant %v", s.Values, want)
	}
	if len(s.Errors) > 0 {
		t.Errorf("errors: %v", s.Errors)
	}
	warned := notes(s, slog.LevelWarn)
	for _, w := range []string{"logfile = /var/log/postgresql/pgbouncer.log ignored: qprouter logs to stderr",
		"pidfile = /var/run/postgresql/pgbouncer.pid ignored"} {
		if !strings.Contains(warned, w) {
			t.Errorf("no warning %q in:\n%s", w, warned)
		}
	}
	if strings.Contains(warned, "unknown") || strings.Contains(warned, "tcp_keepalive") || strings.Contains(warned, "appdb") {
		t.Errorf("warned about what needs nothing:\n%s", warned)
	}
	if d := notes(s, slog.LevelDebug); !strings.Contains(d, "ignore_startup_parameters = extra_float_digits ignored: qprouter accepts every startup parameter") {
		t.Errorf("debug notes:\n%s", d)
	}
	if _, err := pgconn.ParseConfig(s.Values["server_url"]); err != nil {
		t.Errorf("server url: %v", err)
	}
}

// notes joins the notes at level, one a line.
func notes(s *Settings, level slog.Level) string {
	var b strings.Builder
	for _, n := range s.Notes {
		if n.Level == level {
			b.WriteString(n.Msg + "\n")
		}
	}
	return b.String()
}

func load(t *testing.T, text string) *Settings {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pgbouncer.ini")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const base = "[databases]\n* = host=127.0.0.1 port=5432\n[pgbouncer]\nauth_type = trust\n"

// What qprouter refuses, by the setting it concerns, with a message
// naming the key or the [databases] entry.
func TestBouncerRefused(t *testing.T) {
	for _, c := range []struct{ text, key, msg string }{
		{base + "pool_mode = batch\n", "pool_mode", "pool_mode = batch: want session, transaction or statement"},
		{"[databases]\n* = host=db1 dbname=baz\n", "server_url", "[databases] *: dbname=baz: the * entry serves each database under its own name"},
		{"[databases]\n* = host=db1,db2 load_balance_hosts=random\n", "server_url", "[databases] *: load_balance_hosts=random: want round-robin or disable"},
		{"[pgbouncer]\nauth_type = trust\n", "server_url", "no [databases] entry to take the server from"},
		{"[databases]\n* = host=db1\n", "auth_file", "auth_type = md5 without auth_file or auth_user"},
		{base + "auth_type = hba\n", "auth_hba_file", "auth_type = hba without auth_hba_file"},
		{base + "auth_type = pam\n", "auth_file", "auth_type = pam is not supported by qprouter"},
		{base + "listen_addr = 127.0.0.1,::1\n", "listen", "listen_addr = 127.0.0.1,::1: qprouter listens on one address"},
		{base + "listen_port = many\n", "listen", "listen_port = many: want a port number"},
		{base + "default_pool_size = 0\n", "pool_size", "default_pool_size = 0: want a whole number from 1"},
		{base + "server_idle_timeout = soon\n", "idle_timeout", "server_idle_timeout = soon: want seconds"},
		{base + "client_tls_sslmode = require\n", "tls_cert", "client_tls_sslmode = require needs client_tls_cert_file and client_tls_key_file"},
		{base + "client_tls_sslmode = verify-full\nclient_tls_cert_file = c\nclient_tls_key_file = k\n", "tls_ca_file", "client_tls_sslmode = verify-full needs client_tls_ca_file"},
	} {
		s := load(t, c.text)
		err := s.Errors[c.key]
		if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "pgbouncer.ini /") {
			t.Errorf("%q: %s error %v, want %q", c.text, c.key, err, c.msg)
		}
		if _, ok := s.Values[c.key]; ok {
			t.Errorf("%q: %s both refused and set to %q", c.text, c.key, s.Values[c.key])
		}
	}
}

// Each [databases] entry but * is a database of its own on its server,
// renamed, with a forced user and its password, as PgBouncer serves it;
// entries qprouter cannot serve are errors naming them.
func TestBouncerDatabases(t *testing.T) {
	s := load(t, "[databases]\n"+
		"a = host=db1 port=5432\n"+
		"b = host=db2 port=6000 dbname=real_b connect_query='SET work_mem = ''64MB''' client_encoding=LATIN1 datestyle='ISO, DMY' timezone=UTC application_name=app auth_user=x\n"+
		"c = host=db1 dbname=c2 user=app password='p w'\n"+
		"d = user=ro\n"+
		"e = host=db1,db2 port=6000 load_balance_hosts=disable\n"+
		"* = host=db3 password=star\n"+
		"[pgbouncer]\nauth_type = trust\nunix_socket_dir = /run/bouncer\nserver_tls_sslmode = require\n")
	if len(s.Errors) > 0 || len(s.PoolErrors) > 0 {
		t.Fatalf("errors: %v %v", s.Errors, s.PoolErrors)
	}
	want := map[string]string{
		"a": "postgres://db1:5432/?sslmode=require",
		"b": "postgres://db2:6000/real_b?application_name=app&auth_user=x&client_encoding=LATIN1&connect_query=SET%20work_mem%20%3D%20%2764MB%27&datestyle=ISO%2C%20DMY&sslmode=require&timezone=UTC",
		"c": "postgres://app:p%20w@db1:5432/c2?sslmode=require",
		"d": "postgres://ro@/?host=%2Frun%2Fbouncer&port=5432&sslmode=require",
		"e": "postgres://db1:6000,db2:6000/?load_balance_hosts=disable&sslmode=require",
	}
	if !maps.Equal(s.Databases, want) {
		t.Errorf("databases:\n got %v\nwant %v", s.Databases, want)
	}
	// password= without user= is not used, as in PgBouncer.
	if u := s.Values["server_url"]; u != "postgres://db3:5432/?sslmode=require" {
		t.Errorf("server_url = %q", u)
	}
	for _, c := range []struct{ text, msg string }{
		{"[databases]\na = host=db1,db2 load_balance_hosts=random\n* = host=db1\n", "[databases] a: load_balance_hosts=random: want round-robin or disable"},
		{"[databases]\na = host='db1\n* = host=db1\n", "[databases] a = host='db1: a quoted value is not closed"},
		{"[databases]\na = port=x\n* = host=db1\n", "[databases] a: port=x: want a port number"},
	} {
		s := load(t, c.text)
		if err := errors.Join(s.PoolErrors...); err == nil || !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "pgbouncer.ini /") {
			t.Errorf("%q: %v, want %q", c.text, err, c.msg)
		}
		if _, ok := s.Databases["a"]; ok || s.Values["server_url"] == "" {
			t.Errorf("%q: databases %v, server_url %q", c.text, s.Databases, s.Values["server_url"])
		}
	}
}

// Files that cannot be read are errors at once.
func TestBouncerLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	missing := filepath.Join(dir, "missing.ini")
	inc := write("inc.ini", "[pgbouncer]\n%include "+missing+"\n")
	loop := write("loop.ini", "%include "+filepath.Join(dir, "loop.ini")+"\n")
	nosection := write("nosection.ini", "pool_mode = session\n")
	syntax := write("syntax.ini", "[pgbouncer]\npool_mode session\n")
	for path, msg := range map[string]string{
		missing:   "pgbouncer.ini: open " + missing + ": no such file or directory",
		inc:       "inc.ini:2: %include: open " + missing,
		loop:      "more than 10 levels of %include",
		nosection: "pool_mode = ... comes before any [section]",
		syntax:    "delimiter",
	} {
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", path, err, msg)
		}
	}
}

// %include continues the current section; later keys win; values keep
// what PgBouncer keeps (no inline comments, no quote removal).
func TestBouncerIncludeAndValues(t *testing.T) {
	dir := t.TempDir()
	inc := filepath.Join(dir, "pools.ini")
	if err := os.WriteFile(inc, []byte("default_pool_size = 7\nmin_pool_size = 2\n[databases]\n'my db' = host=/run/pg port=5433 user=root password='it''s #1'\nnouser = host=/run/pg password=unused\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := load(t, "[pgbouncer]\nauth_type = trust\ndefault_pool_size = 3\n  %include "+inc+"\n[pgbouncer]\nserver_reset_query = SELECT 1 ; # not a comment\nlisten_addr = *\nserver_lifetime = 0\nserver_idle_timeout = 0.5\nquery_wait_timeout = 0\n")
	for k, v := range map[string]string{
		"pool_size": "7", "min_idle": "2", "reset_query": "SELECT 1 ; # not a comment", "listen": ":6432",
		"max_lifetime": "1ns", "idle_timeout": "500ms", "acquire_timeout": "876000h0m0s",
	} {
		if s.Values[k] != v {
			t.Errorf("%s = %q, want %q (errors %v)", k, s.Values[k], v, s.Errors)
		}
	}
	// One entry, no *: that database only (no server_url).
	if u, ok := s.Values["server_url"]; ok {
		t.Errorf("server_url = %q without a * entry", u)
	}
	url := s.Databases["my db"]
	cfg, err := pgconn.ParseConfig(url)
	if url != "postgres://root:it%27s%20%231@/?host=%2Frun%2Fpg&port=5433" || err != nil || cfg.Host != "/run/pg" || cfg.Port != 5433 || cfg.Password != "it's #1" {
		t.Errorf("databases %v: %+v %v", s.Databases, cfg, err)
	}
	// A password without a user is not used, as in PgBouncer (it would
	// be every client's).
	if u := s.Databases["nouser"]; u != "postgres:///?host=%2Frun%2Fpg&port=5432" {
		t.Errorf("nouser: %s", u)
	}
	if w := notes(s, slog.LevelWarn); !strings.Contains(w, "password= without user= is not used") {
		t.Errorf("no warning of the unused password in:\n%s", w)
	}
}

// Unknown keys are one warning; ignored keys set away from PgBouncer's
// default are one warning each; per-database settings are warned about.
func TestBouncerWarnings(t *testing.T) {
	s := load(t, base+"frobnicate = 1\nquery_timeout = 0\nserver_round_robin = 1\nserver_fast_close = 1\n[databases]\nx = host=127.0.0.1 port=5432 user=app pool_size=5 load_balance_hosts=disable connect_query='SELECT 1' colour=blue\n* = host=127.0.0.1 port=5432 pool_size=3 max_db_connections=4\n[users]\napp = max_user_client_connections=3 max_user_connections=1 mystery=1\n[peers]\n1 = host=p1\n[extra]\n")
	if len(s.Errors) > 0 {
		t.Fatalf("errors: %v", s.Errors)
	}
	w := notes(s, slog.LevelWarn)
	for _, want := range []string{
		"unknown keys ignored: [pgbouncer] frobnicate, [databases] x: colour, [users] app: mystery, [extra]",
		"server_fast_close = 1 ignored",
		"[databases] *: max_db_connections=4 pool_size=3 ignored: the [pgbouncer] settings apply to databases without an entry of their own",
		"[peers] ignored",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("no %q in:\n%s", want, w)
		}
	}
	if s.Values["server_round_robin"] != "true" {
		t.Errorf("server_round_robin = 1: %q", s.Values["server_round_robin"])
	}
	if x := s.Databases["x"]; x != "postgres://app@127.0.0.1:5432/?connect_query=SELECT%201&load_balance_hosts=disable" {
		t.Errorf("[databases] x: %s", x)
	}
	if strings.Contains(w, "query_timeout") || strings.Count(w, "unknown") != 1 {
		t.Errorf("warnings:\n%s", w)
	}
}

func TestBouncerConnString(t *testing.T) {
	got, err := connString("  host=db1   port=5433 application_name='a b' password='x''y'")
	if err != nil || got["host"] != "db1" || got["port"] != "5433" || got["application_name"] != "a b" || got["password"] != "x'y" {
		t.Errorf("%v %v", got, err)
	}
	for _, bad := range []string{"host", "host=", "=x", "host='x", "host = ''"} {
		if _, err := connString(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if got, err := connString(""); err != nil || len(got) != 0 {
		t.Errorf("empty: %v %v", got, err)
	}
}

// auth_user, auth_query and auth_dbname carry over, with or without an
// auth_file beside them.
func TestBouncerAuthQuery(t *testing.T) {
	s := load(t, "[databases]\n* = host=db1\n[pgbouncer]\nauth_type = scram-sha-256\nauth_user = pgbouncer\nauth_query = SELECT usename, passwd FROM pgbouncer.get_auth($1)\nauth_dbname = authdb\n")
	for k, v := range map[string]string{"auth_user": "pgbouncer", "auth_query": "SELECT usename, passwd FROM pgbouncer.get_auth($1)", "auth_dbname": "authdb",
		"auth_type": "scram-sha-256"} {
		if s.Values[k] != v {
			t.Errorf("%s = %q, want %q (errors %v)", k, s.Values[k], v, s.Errors)
		}
	}
	if _, ok := s.Values["auth_file"]; ok || len(s.Errors) > 0 {
		t.Errorf("values %v, errors %v", s.Values, s.Errors)
	}
	if w := notes(s, slog.LevelWarn); strings.Contains(w, "auth_") {
		t.Errorf("warned about the auth query:\n%s", w)
	}
}

// Per-database pool_size, min_pool_size and pool_mode, and per-user
// pool_mode, become qprouter's per-pool tables; values qprouter cannot use
// are refused, naming the entry.
func TestBouncerPools(t *testing.T) {
	s := load(t, base+"pool_mode = transaction\nmax_db_connections = 40\nmax_user_connections = 30\nreserve_pool_size = 3\nreserve_pool_timeout = 0.5\nmax_db_client_connections = 50\nmax_user_client_connections = 60\nclient_idle_timeout = 90\nidle_transaction_timeout = 2\nquery_timeout = 120\ntransaction_timeout = 0.5\nclient_login_timeout = 15\n[databases]\napp = host=127.0.0.1 port=5432 pool_size=0x10 min_pool_size=2 pool_mode=Session server_lifetime=90 query_wait_timeout=0 reserve_pool=4 max_db_connections=20 max_db_client_connections=7\n[users]\nmigrator = pool_mode=session max_user_connections=2 max_user_client_connections=3\n")
	want := map[string]map[string]string{
		"app": {"pool_size": "16", "min_idle": "2", "pool_mode": "session", "max_lifetime": "1m30s", "acquire_timeout": forever.String(),
			"reserve_pool_size": "4", "max_db_connections": "20", "max_db_client_connections": "7"},
		"*/migrator": {"pool_mode": "session", "max_user_connections": "2", "max_user_client_connections": "3"},
	}
	if !reflect.DeepEqual(s.Pools, want) || len(s.PoolErrors) > 0 || len(s.Errors) > 0 {
		t.Errorf("pools %v, errors %v %v; want %v", s.Pools, s.PoolErrors, s.Errors, want)
	}
	for k, v := range map[string]string{"pool_mode": "transaction", "max_db_connections": "40", "max_user_connections": "30",
		"reserve_pool_size": "3", "reserve_pool_timeout": "500ms", "max_db_client_connections": "50", "max_user_client_connections": "60",
		"client_idle_timeout": "1m30s", "idle_transaction_timeout": "2s", "query_timeout": "2m0s", "transaction_timeout": "500ms", "client_login_timeout": "15s"} {
		if s.Values[k] != v {
			t.Errorf("top-level %s = %q, want %q", k, s.Values[k], v)
		}
	}
	// An entry's "not set" values leave the [pgbouncer] value in force.
	if s := load(t, base+"[databases]\napp = host=127.0.0.1 server_lifetime=0 query_wait_timeout=-1 pool_size=-1 min_pool_size=-1 max_db_connections=0 max_db_client_connections=-3\n[users]\nbob = max_user_connections=0 max_user_client_connections=0\n"); len(s.Pools) != 0 || len(s.PoolErrors) != 0 {
		t.Errorf("entries of unset values: pools %v, errors %v; want none", s.Pools, s.PoolErrors)
	}
	// min_pool_size is capped at default_pool_size, as PgBouncer caps it.
	if s := load(t, base+"default_pool_size = 5\nmin_pool_size = 6\n"); s.Values["min_idle"] != "5" || s.Errors["min_idle"] != nil {
		t.Errorf("min_pool_size = 6 over default_pool_size = 5: min_idle %q, error %v; want 5", s.Values["min_idle"], s.Errors["min_idle"])
	}
	if s := load(t, base+"reserve_pool_timeout = 0\n"); s.Values["reserve_pool_timeout"] != forever.String() {
		t.Errorf("reserve_pool_timeout = 0 (the reserve off) became %q", s.Values["reserve_pool_timeout"])
	}
	for text, msg := range map[string]string{
		"[databases]\napp = host=127.0.0.1 pool_mode=batch\n":    "[databases] app: pool_mode=batch: want session, transaction or statement",
		"[databases]\napp = host=127.0.0.1 pool_size=0\n":        "[databases] app: pool_size=0: want at least 1",
		"[databases]\napp = host=127.0.0.1 min_pool_size=x\n":    "[databases] app: min_pool_size=x: want a whole number",
		"[databases]\napp = host=127.0.0.1 server_lifetime=-1\n": "[databases] app: server_lifetime=-1: want seconds",
		base + "[users]\nbob = pool_mode=batch\n":                "[users] bob: pool_mode=batch",
		base + "[users]\nbob = max_user_connections=x\n":         "[users] bob: max_user_connections=x: want a whole number",
		"[databases]\napp = host=127.0.0.1 reserve_pool=x\n":     "[databases] app: reserve_pool=x: want a whole number",
	} {
		s := load(t, text)
		if len(s.PoolErrors) != 1 || !strings.Contains(s.PoolErrors[0].Error(), msg) {
			t.Errorf("%q: %v, want %q", text, s.PoolErrors, msg)
		}
	}
}

// auth_type md5 is qprouter's default (the method by the secret);
// scram-sha-256 and plain carry over.
func TestBouncerAuthType(t *testing.T) {
	for typ, want := range map[string]string{"md5": "", "scram-sha-256": "scram-sha-256", "plain": "plain", "Plain": "plain"} {
		s := load(t, "[databases]\n* = host=db1\n[pgbouncer]\nauth_type = "+typ+"\nauth_file = users.txt\n")
		if s.Values["auth_type"] != want || len(s.Errors) > 0 || strings.Contains(notes(s, slog.LevelWarn), "auth_type") {
			t.Errorf("auth_type = %s: %q, want %q; errors %v, warnings %s", typ, s.Values["auth_type"], want, s.Errors, notes(s, slog.LevelWarn))
		}
	}
}

// auth_type = hba takes auth_hba_file, with the auth file when there is
// one; an auth_hba_file under another auth_type is warned about.
func TestBouncerHBA(t *testing.T) {
	s := load(t, "[databases]\n* = host=db1\n[pgbouncer]\nauth_type = hba\nauth_hba_file = /etc/pgbouncer/hba.conf\nauth_file = /etc/pgbouncer/userlist.txt\nauth_ident_file = /etc/pgbouncer/ident.conf\n")
	if s.Values["auth_hba_file"] != "/etc/pgbouncer/hba.conf" || s.Values["auth_file"] != "/etc/pgbouncer/userlist.txt" ||
		s.Values["auth_ident_file"] != "/etc/pgbouncer/ident.conf" || len(s.Errors) > 0 {
		t.Errorf("values %v, errors %v", s.Values, s.Errors)
	}
	s = load(t, "[databases]\n* = host=db1\n[pgbouncer]\nauth_type = HBA\nauth_hba_file = hba.conf\n")
	if s.Values["auth_hba_file"] != "hba.conf" || s.Values["auth_file"] != "" || len(s.Errors) > 0 {
		t.Errorf("without an auth file: values %v, errors %v", s.Values, s.Errors)
	}
	s = load(t, base+"auth_hba_file = hba.conf\nauth_ident_file = ident.conf\n")
	if s.Values["auth_hba_file"] != "" || s.Values["auth_ident_file"] != "" || !strings.Contains(notes(s, slog.LevelWarn), "auth_hba_file = hba.conf ignored: auth_type is trust, not hba") ||
		!strings.Contains(notes(s, slog.LevelWarn), "auth_ident_file = ident.conf ignored: auth_type is trust, not hba") {
		t.Errorf("auth_type trust: values %v, notes %s", s.Values, notes(s, slog.LevelWarn))
	}
}

// tcp_defer_accept is an integer in PgBouncer: 0 turns it off.
func TestBouncerDeferAccept(t *testing.T) {
	for v, want := range map[string]string{"0": "false", "1": "true", "45": "true"} {
		if s := load(t, base+"tcp_defer_accept = "+v+"\n"); s.Values["tcp_defer_accept"] != want {
			t.Errorf("tcp_defer_accept = %s: %q, want %q", v, s.Values["tcp_defer_accept"], want)
		}
	}
	if s := load(t, base+"tcp_defer_accept = yes\n"); s.Errors["tcp_defer_accept"] == nil {
		t.Error("tcp_defer_accept = yes accepted")
	}
}

// unix_socket_group goes with unix_socket_dir; without one it is warned
// about.
func TestBouncerSocketGroup(t *testing.T) {
	s := load(t, base+"unix_socket_dir = /run/q\nunix_socket_group = pgusers\n")
	if s.Values["unix_socket_group"] != "pgusers" || s.Values["unix_socket_dir"] != "/run/q" || len(s.Errors) > 0 {
		t.Errorf("values %v, errors %v", s.Values, s.Errors)
	}
	s = load(t, base+"unix_socket_group = pgusers\n")
	if _, ok := s.Values["unix_socket_group"]; ok || !strings.Contains(notes(s, slog.LevelWarn), "unix_socket_group = pgusers ignored: no unix_socket_dir") {
		t.Errorf("without a socket: values %v, warnings %s", s.Values, notes(s, slog.LevelWarn))
	}
}

// client_tls_ca_file asks clients for certificates (for hba cert lines);
// verify-ca and verify-full require one of every client.
func TestBouncerClientCA(t *testing.T) {
	for mode, require := range map[string]string{"prefer": "", "require": "", "verify-ca": "true", "verify-full": "true"} {
		s := load(t, base+"client_tls_sslmode = "+mode+"\nclient_tls_cert_file = c.pem\nclient_tls_key_file = k.pem\nclient_tls_ca_file = ca.pem\n")
		if s.Values["tls_ca_file"] != "ca.pem" || s.Values["tls_cert"] != "c.pem" || len(s.Errors) > 0 {
			t.Errorf("%s: values %v, errors %v", mode, s.Values, s.Errors)
		}
		if s.Values["require_client_cert"] != require || (mode != "prefer") != (s.Values["require_tls"] == "true") {
			t.Errorf("%s: require_client_cert %q require_tls %q", mode, s.Values["require_client_cert"], s.Values["require_tls"])
		}
	}
}

// admin_users and stats_users become the console's user lists, PgBouncer's
// spaces and empty items dropped.
func TestBouncerConsoleUsers(t *testing.T) {
	s := load(t, base+"admin_users = alice , bob\nstats_users = ,carol,\n")
	if s.Values["admin_users"] != "alice,bob" || s.Values["stats_users"] != "carol" || len(s.Errors) > 0 {
		t.Errorf("values %v, errors %v", s.Values, s.Errors)
	}
	s = load(t, base+"admin_users =\n")
	if v, ok := s.Values["admin_users"]; ok {
		t.Errorf("an empty admin_users gave %q", v)
	}
}

// pool_mode = statement maps to qprouter's statement mode, top-level and
// per entry.
func TestBouncerStatementMode(t *testing.T) {
	s := load(t, base+"pool_mode = statement\n[users]\nbob = pool_mode=statement\n")
	if s.Values["pool_mode"] != "statement" || s.Pools["*/bob"]["pool_mode"] != "statement" || len(s.Errors)+len(s.PoolErrors) > 0 {
		t.Errorf("values %v, pools %v, errors %v %v", s.Values, s.Pools, s.Errors, s.PoolErrors)
	}
}
