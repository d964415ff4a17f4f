// The [pgbouncer] section onto qprouter's settings.

package bouncerini

import (
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"gopkg.in/ini.v1"
)

// Durations standing for PgBouncer's zeros: "disabled" (server_idle_timeout,
// query_wait_timeout) and "every time" (server_lifetime: use a connection
// once; server_check_delay: always check).
const (
	forever   = 876000 * time.Hour // 100 years
	everyTime = time.Nanosecond
)

// mapper collects the Settings of one file.
type mapper struct {
	path    string
	s       *Settings
	unknown []string // keys nobody knows, for one warning
}

func mapFile(path string, f *ini.File) *Settings {
	m := &mapper{path: path, s: &Settings{Values: map[string]string{}, Errors: map[string]error{}, Pools: map[string]map[string]string{}}}
	m.note(slog.LevelInfo, "settings from pgbouncer.ini %s, beneath the command line, the environment and --config", path)
	kv := func(name string) map[string]string {
		out := map[string]string{}
		if sec, err := f.GetSection(name); err == nil {
			for _, k := range sec.Keys() {
				out[k.Name()] = k.Value()
			}
		}
		return out
	}
	server := m.pgbouncer(kv("pgbouncer"))
	m.databases(f, server)
	m.users(f)
	for _, sec := range f.Sections() {
		switch name := sec.Name(); name {
		case ini.DefaultSection, "pgbouncer", "databases", "users":
		case "peers":
			m.warn("[peers] ignored: qprouter has no peering (cancel requests reach the qprouter that runs the query)")
		default:
			m.unknown = append(m.unknown, "["+name+"]")
		}
	}
	if len(m.unknown) > 0 {
		m.warn(unknownKeys+": %s", strings.Join(m.unknown, ", "))
	}
	return m.s
}

// set records a value for key, unless key is refused.
func (m *mapper) set(key, value string) {
	if _, refused := m.s.Errors[key]; !refused {
		m.s.Values[key] = value
	}
}

// poolValue records a per-pool setting of table (a [databases] or [users]
// entry, at) from the PgBouncer key, refusing a value qprouter cannot use.
func (m *mapper) poolValue(at, table, bkey, key, value string) {
	switch key {
	case "pool_mode":
		value = strings.ToLower(value)
		if value != "session" && value != "transaction" && value != "statement" {
			m.s.PoolErrors = append(m.s.PoolErrors, fmt.Errorf("pgbouncer.ini %s: %s: %s=%s: want session, transaction or statement", m.path, at, bkey, value))
			return
		}
	case "max_lifetime", "acquire_timeout":
		if key == "acquire_timeout" && strings.TrimSpace(value) == "-1" {
			return // PgBouncer's "not set": the [pgbouncer] value applies
		}
		d, err := seconds(value)
		if err != nil {
			m.s.PoolErrors = append(m.s.PoolErrors, fmt.Errorf("pgbouncer.ini %s: %s: %s=%s: %v", m.path, at, bkey, value, err))
			return
		}
		if d == 0 {
			if key == "max_lifetime" {
				return // an entry's server_lifetime=0 is "not set" (server.c pool_server_lifetime)
			}
			d = forever // query_wait_timeout=0 turns the wait's limit off
		}
		value = d.String()
	default:
		n, err := strtol(value)
		if err != nil {
			m.s.PoolErrors = append(m.s.PoolErrors, fmt.Errorf("pgbouncer.ini %s: %s: %s=%s: want a whole number", m.path, at, bkey, value))
			return
		}
		switch {
		case strings.HasPrefix(key, "max_") && n <= 0:
			// An entry's cap of 0 or less is "not set": the [pgbouncer]
			// cap applies (server.c database_max_connections and the like).
			return
		case n < 0:
			return // pool_size, min_pool_size, reserve_pool_size: -1 is "not set"
		case key == "pool_size" && n < 1:
			m.s.PoolErrors = append(m.s.PoolErrors, fmt.Errorf("pgbouncer.ini %s: %s: %s=%s: want at least 1", m.path, at, bkey, value))
			return
		}
		value = strconv.FormatInt(n, 10)
	}
	if m.s.Pools[table] == nil {
		m.s.Pools[table] = map[string]string{}
	}
	m.s.Pools[table][key] = value
}

// refuse records why the file's value for key cannot be used (the first
// reason wins); the key then has no value.
func (m *mapper) refuse(key, format string, args ...any) {
	if _, ok := m.s.Errors[key]; !ok {
		if m.path == "" { // one setting (Setting), not a file
			m.s.Errors[key] = fmt.Errorf(format, args...)
		} else {
			m.s.Errors[key] = fmt.Errorf("pgbouncer.ini %s: "+format, append([]any{m.path}, args...)...)
		}
	}
	delete(m.s.Values, key)
}

func (m *mapper) note(level slog.Level, format string, args ...any) {
	m.s.Notes = append(m.s.Notes, Note{Level: level, Msg: fmt.Sprintf(format, args...)})
}

// unknownKeys starts the note on keys PgBouncer's section does not have.
const unknownKeys = "unknown keys ignored"

func (m *mapper) warn(format string, args ...any) {
	m.note(slog.LevelWarn, "pgbouncer.ini: "+format, args...)
}

// serverSide is what [pgbouncer] says about reaching the server, for the
// server URL built from [databases].
type serverSide struct {
	poolMode  string     // "session" (PgBouncer's default) or "transaction"
	params    url.Values // sslmode, sslrootcert, sslcert, sslkey, connect_timeout
	socketDir string     // unix_socket_dir: where a [databases] entry without host= connects
}

// pgbouncer maps the [pgbouncer] section.
func (m *mapper) pgbouncer(kv map[string]string) serverSide {
	server := serverSide{poolMode: "session", params: url.Values{}, socketDir: kv["unix_socket_dir"]}
	done := map[string]bool{}
	get := func(key string) (string, bool) {
		v, ok := kv[key]
		done[key] = true
		return v, ok
	}

	// Where clients connect.
	dir, _ := get("unix_socket_dir")
	if dir != "" {
		m.set("unix_socket_dir", dir)
	}
	if mode, ok := get("unix_socket_mode"); ok {
		m.set("unix_socket_mode", mode)
	}
	if group, _ := get("unix_socket_group"); group != "" {
		if dir != "" {
			m.set("unix_socket_group", group)
		} else {
			m.warn("unix_socket_group = %s ignored: no unix_socket_dir, so no socket", group)
		}
	}
	addr, hasAddr := get("listen_addr")
	port, hasPort := get("listen_port")
	if hasAddr || hasPort {
		m.listen(addr, hasAddr, port, hasPort)
	}

	if v, ok := get("pool_mode"); ok {
		switch mode := strings.ToLower(v); mode {
		case "session", "transaction", "statement":
			m.set("pool_mode", mode)
			server.poolMode = mode
		default:
			m.refuse("pool_mode", "pool_mode = %s: want session, transaction or statement", v)
		}
	}

	// Pool sizes and limits.
	m.count(get, "default_pool_size", "pool_size", 1)
	m.count(get, "min_pool_size", "min_idle", 0)
	m.count(get, "max_client_conn", "max_clients", 0)
	m.count(get, "max_db_connections", "max_db_connections", 0)
	m.count(get, "max_user_connections", "max_user_connections", 0)
	m.count(get, "max_db_client_connections", "max_db_client_connections", 0)
	m.count(get, "max_user_client_connections", "max_user_client_connections", 0)
	m.count(get, "reserve_pool_size", "reserve_pool_size", 0)
	if v, ok := get("max_prepared_statements"); ok && v == "0" {
		m.note(slog.LevelDebug, "pgbouncer.ini: max_prepared_statements = 0 (off in PgBouncer): qprouter supports prepared statements in transaction mode all the same")
	} else if ok {
		m.countValue("max_prepared_statements", v, "prepared_per_server", 1)
	}
	if p, err := strconv.Atoi(m.s.Values["pool_size"]); err == nil {
		if n, err := strconv.Atoi(m.s.Values["min_idle"]); err == nil && n > p {
			// PgBouncer: "effectively capped at the pool size".
			m.note(slog.LevelInfo, "pgbouncer.ini: min_pool_size = %d is above default_pool_size = %d: capped at %d, as PgBouncer caps it", n, p, p)
			m.s.Values["min_idle"] = strconv.Itoa(p)
		}
	}

	// Timeouts.
	m.duration(get, "server_idle_timeout", "idle_timeout", forever)
	m.duration(get, "server_lifetime", "max_lifetime", everyTime)
	m.duration(get, "server_check_delay", "health_check_after", everyTime)
	m.duration(get, "query_wait_timeout", "acquire_timeout", forever)
	m.duration(get, "reserve_pool_timeout", "reserve_pool_timeout", forever) // 0 turns the reserve off
	m.duration(get, "client_idle_timeout", "client_idle_timeout", 0)         // 0 is off in both
	m.duration(get, "idle_transaction_timeout", "idle_transaction_timeout", 0)
	m.duration(get, "query_timeout", "query_timeout", 0)
	m.duration(get, "transaction_timeout", "transaction_timeout", 0)
	m.duration(get, "client_login_timeout", "client_login_timeout", forever) // 0 is off

	if v, ok := get("server_reset_query"); ok {
		if v == "" {
			m.warn("server_reset_query is empty: qprouter resets with DISCARD ALL when a session-mode or pinned client leaves")
		} else {
			m.set("reset_query", v)
		}
	}

	m.auth(get)
	m.clientTLS(get)

	for _, key := range []string{"tcp_defer_accept", "server_round_robin"} {
		if v, ok := get(key); ok { // an integer in PgBouncer: 0 off, anything else on
			if n, err := strtol(v); err != nil {
				m.refuse(key, "%s = %s: want 0 or 1", key, v)
			} else {
				m.set(key, strconv.FormatBool(n != 0))
			}
		}
	}

	// The admin console's users: PgBouncer's lists allow spaces.
	for _, key := range []string{"admin_users", "stats_users"} {
		if v, ok := get(key); ok {
			var names []string
			for _, n := range strings.Split(v, ",") {
				if n = strings.TrimSpace(n); n != "" {
					names = append(names, n)
				}
			}
			if len(names) > 0 {
				m.set(key, strings.Join(names, ","))
			}
		}
	}

	// Reaching the server: parameters of the server URL.
	if v, ok := get("server_tls_sslmode"); ok {
		switch mode := strings.ToLower(v); mode {
		case "disable", "allow", "prefer", "require", "verify-ca", "verify-full":
			server.params.Set("sslmode", mode)
		default:
			m.refuse("server_url", "server_tls_sslmode = %s: want disable, allow, prefer, require, verify-ca or verify-full", v)
		}
	}
	for key, param := range map[string]string{"server_tls_ca_file": "sslrootcert", "server_tls_cert_file": "sslcert", "server_tls_key_file": "sslkey"} {
		if v, ok := get(key); ok && v != "" {
			server.params.Set(param, v)
		}
	}
	if v, ok := get("server_connect_timeout"); ok {
		if d, err := seconds(v); err != nil {
			m.refuse("server_url", "server_connect_timeout = %s: %v", v, err)
		} else if d > 0 {
			server.params.Set("connect_timeout", strconv.FormatInt(int64(math.Ceil(d.Seconds())), 10))
		}
	}

	// The rest: known and ignored, or unknown.
	for _, k := range sortedKeys(kv) {
		if done[k] {
			continue
		}
		v := kv[k]
		ig, ok := ignored[k]
		switch {
		case !ok:
			m.unknown = append(m.unknown, "[pgbouncer] "+k)
		case ig.tuning:
			m.note(slog.LevelDebug, "pgbouncer.ini: %s = %s ignored: %s", k, v, ig.why)
		case v == ig.def:
			m.note(slog.LevelDebug, "pgbouncer.ini: %s = %s is PgBouncer's default: nothing to do", k, v)
		default:
			m.warn("%s = %s ignored: %s", k, v, ig.why)
		}
	}
	return server
}

// listen maps listen_addr and listen_port.
func (m *mapper) listen(addr string, hasAddr bool, port string, hasPort bool) {
	p := "6432"
	if hasPort {
		n, err := strtol(port)
		if err != nil || n < 1 || n > 65535 {
			m.refuse("listen", "listen_port = %s: want a port number", port)
			return
		}
		p = strconv.FormatInt(n, 10)
	}
	host := strings.TrimSpace(addr)
	switch {
	case host == "":
		host = "127.0.0.1"
		m.warn("no listen_addr (PgBouncer then listens on its Unix socket only): qprouter listens on %s", net.JoinHostPort(host, p))
	case host == "*":
		host = "" // every address, IPv4 and IPv6
	case strings.Contains(host, ","):
		m.refuse("listen", "listen_addr = %s: qprouter listens on one address; keep one (or *), or give --listen", addr)
		return
	}
	m.set("listen", net.JoinHostPort(host, p))
}

// count maps an integer key of at least least.
func (m *mapper) count(get func(string) (string, bool), key, to string, least int64) {
	if v, ok := get(key); ok {
		m.countValue(key, v, to, least)
	}
}

func (m *mapper) countValue(key, v, to string, least int64) {
	n, err := strtol(v)
	if err != nil || n < least {
		m.refuse(to, "%s = %s: want a whole number from %d", key, v, least)
		return
	}
	m.set(to, strconv.FormatInt(n, 10))
}

// duration maps a key in seconds; zero means zero's stand-in.
func (m *mapper) duration(get func(string) (string, bool), key, to string, zero time.Duration) {
	v, ok := get(key)
	if !ok {
		return
	}
	d, err := seconds(v)
	if err != nil {
		m.refuse(to, "%s = %s: %v", key, v, err)
		return
	}
	if d == 0 {
		d = zero
	}
	m.set(to, d.String())
}

// seconds reads PgBouncer's time values: seconds, fractions allowed.
func seconds(v string) (time.Duration, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || f > forever.Seconds() {
		return 0, fmt.Errorf("want seconds")
	}
	return time.Duration(f * float64(time.Second)), nil
}

// auth maps auth_type, auth_file and the auth query (auth_user,
// auth_query, auth_dbname).
func (m *mapper) auth(get func(string) (string, bool)) {
	typ, ok := get("auth_type")
	if !ok {
		typ = "md5" // PgBouncer's default
	}
	file, _ := get("auth_file")
	authUser, _ := get("auth_user")
	query, _ := get("auth_query")
	dbname, _ := get("auth_dbname")
	hbaFile, _ := get("auth_hba_file")
	identFile, _ := get("auth_ident_file")
	if hbaFile != "" && !strings.EqualFold(typ, "hba") {
		m.warn("auth_hba_file = %s ignored: auth_type is %s, not hba", hbaFile, typ)
	}
	if identFile != "" && !strings.EqualFold(typ, "hba") {
		m.warn("auth_ident_file = %s ignored: auth_type is %s, not hba", identFile, typ)
	}
	switch t := strings.ToLower(typ); t {
	case "trust":
		if file != "" {
			m.warn("auth_type = trust: every client is trusted and auth_file %s is not read (qprouter's trust does not check user names)", file)
		}
	case "md5", "scram-sha-256", "plain", "hba":
		if t == "hba" {
			if hbaFile == "" {
				m.refuse("auth_hba_file", "auth_type = hba without auth_hba_file: give auth_hba_file (or --auth-hba-file)")
				return
			}
			m.set("auth_hba_file", hbaFile)
			if identFile != "" {
				m.set("auth_ident_file", identFile)
			}
		}
		if file == "" && authUser == "" {
			if t == "hba" {
				return // enough when every rule is trust or reject; qprouter checks the rules at start
			}
			m.refuse("auth_file", "auth_type = %s without auth_file or auth_user: give auth_file (or --auth-file), auth_user for the auth query, or set auth_type = trust", typ)
			return
		}
		if file != "" {
			m.set("auth_file", file)
		}
		if authUser != "" {
			m.set("auth_user", authUser)
			if query != "" {
				m.set("auth_query", query)
			}
			if dbname != "" {
				m.set("auth_dbname", dbname)
			}
		} else if query != "" || dbname != "" {
			m.warn("auth_query/auth_dbname without auth_user ignored: PgBouncer also needs auth_user to run the query")
		}
		if t == "plain" || t == "scram-sha-256" {
			m.set("auth_type", t)
		}
	case "cert":
		// Every client over TLS with a certificate client_tls_ca_file
		// verifies, the user its common name (Config.Check wants the CA).
		m.set("auth_type", t)
	case "any":
		// No password; every [databases] entry must force a user
		// (Config.Check says which does not).
		m.set("auth_type", t)
	case "ldap", "pam":
		m.refuse("auth_file", "auth_type = %s is not supported by qprouter: use md5 or scram-sha-256 with auth_file (or give --auth-file)", typ)
	default:
		m.refuse("auth_file", "auth_type = %s: want trust, md5, scram-sha-256, plain, cert or hba", typ)
	}
}

// clientTLS maps client_tls_sslmode and the key pair.
func (m *mapper) clientTLS(get func(string) (string, bool)) {
	mode, ok := get("client_tls_sslmode")
	if !ok {
		mode = "disable"
	}
	cert, _ := get("client_tls_cert_file")
	key, _ := get("client_tls_key_file")
	ca, _ := get("client_tls_ca_file")
	switch mode = strings.ToLower(mode); mode {
	case "disable":
		if cert != "" || key != "" {
			m.note(slog.LevelDebug, "pgbouncer.ini: client_tls_sslmode = disable: client_tls_cert_file and client_tls_key_file are not used")
		}
		return
	case "allow", "prefer", "require", "verify-ca", "verify-full":
	default:
		m.refuse("require_tls", "client_tls_sslmode = %s: want disable, allow, prefer, require, verify-ca or verify-full", mode)
		return
	}
	if cert == "" || key == "" {
		m.refuse("tls_cert", "client_tls_sslmode = %s needs client_tls_cert_file and client_tls_key_file", mode)
	} else {
		m.set("tls_cert", cert)
		m.set("tls_key", key)
	}
	switch mode {
	case "require":
		m.set("require_tls", "true")
	case "verify-ca", "verify-full":
		// As PgBouncer: every client shows a certificate the CA file
		// verifies (verify-full checks nothing more on the client side).
		if ca == "" {
			m.refuse("tls_ca_file", "client_tls_sslmode = %s needs client_tls_ca_file to verify client certificates with", mode)
			return
		}
		m.set("require_tls", "true")
		m.set("require_client_cert", "true")
	}
	if ca != "" {
		m.set("tls_ca_file", ca) // client certificates asked for, and checked by hba cert lines
	}
}

// ignoredKey is a [pgbouncer] key qprouter has no use for: def is
// PgBouncer's default (a key set to it needs nothing), why what qprouter
// does instead; tuning keys (sockets, buffers, logging) are noted at debug
// level whatever their value.
type ignoredKey struct {
	def, why string
	tuning   bool
}

var ignored = map[string]ignoredKey{
	"logfile":         {"", "qprouter logs to stderr", false},
	"pidfile":         {"", "qprouter writes no pid file", false},
	"syslog":          {"0", "qprouter logs to stderr", false},
	"syslog_facility": {"daemon", "qprouter logs to stderr", true},
	"syslog_ident":    {"pgbouncer", "qprouter logs to stderr", true},
	"user":            {"", "qprouter runs as the user that starts it", false},

	"auth_ldap_options": {"", "auth_type = ldap is not supported", false},

	"server_reset_query_always": {"0", "the reset query runs when a session-mode or pinned client leaves, not after each transaction", false},
	"server_fast_close":         {"0", "server connections close when their client leaves", false},
	"max_packet_size":           {"2147483647", "qprouter accepts client messages up to 1 GB, as PostgreSQL does", false},
	"disable_pqexec":            {"0", "the simple query protocol is always allowed", false},
	"application_name_add_host": {"0", "application_name reaches the server as the client sent it", false},
	"login_notify_message":      {"", "no message is sent after login", false},
	"peer_id":                   {"0", "qprouter has no peering", false},

	"server_check_query":        {"", "qprouter checks with an empty query", true},
	"server_login_retry":        {"15", "a failed server login is reported to the client at once", true},
	"cancel_wait_timeout":       {"10", "a cancel request is delivered within 5 s or dropped", true},
	"ignore_startup_parameters": {"", "qprouter accepts every startup parameter and applies it as a setting on the server", true},
	"track_extra_parameters":    {"IntervalStyle", "qprouter tracks every setting", true},
	"scram_iterations":          {"4096", "verifiers derived from plaintext passwords use 4096 iterations", true},
	"autodb_idle_timeout":       {"3600", "a pool no client uses and that holds no server connection is removed after 60 s", true},
	"pool_idle_timeout":         {"0", "a pool no client uses and that holds no server connection is removed after 60 s", true},
	"suspend_timeout":           {"10", "there is no online restart", true},
	"query_wait_notify":         {"5", "waiting clients are not notified", true},
	"stats_period":              {"60", "statistics are in /metrics", true},
	"log_connections":           {"1", "use --log-level", true},
	"log_disconnections":        {"1", "use --log-level", true},
	"log_pooler_errors":         {"1", "use --log-level", true},
	"log_stats":                 {"1", "statistics are in /metrics", true},
	"verbose":                   {"0", "use --log-level", true},
	"job_name":                  {"pgbouncer", "logs say qprouter", true},
	"service_name":              {"pgbouncer", "logs say qprouter", true},
	"conffile":                  {"", "the file is the one given", true},
	"listen_backlog":            {"128", "the system default applies", true},
	"so_reuseport":              {"0", "one process listens", true},
	"pkt_buf":                   {"4096", "buffers grow as needed", true},
	"sbuf_loopcnt":              {"5", "not needed", true},
	"tcp_keepalive":             {"1", "Go's TCP keepalive defaults apply", true},
	"tcp_keepcnt":               {"0", "Go's TCP keepalive defaults apply", true},
	"tcp_keepidle":              {"0", "Go's TCP keepalive defaults apply", true},
	"tcp_keepintvl":             {"0", "Go's TCP keepalive defaults apply", true},
	"tcp_socket_buffer":         {"0", "the system default applies", true},
	"tcp_user_timeout":          {"0", "the system default applies", true},
	"dns_max_ttl":               {"15", "names are resolved at each connect", true},
	"dns_nxdomain_ttl":          {"15", "names are resolved at each connect", true},
	"dns_zone_check_period":     {"0", "names are resolved at each connect", true},
	"resolv_conf":               {"", "the system resolver applies", true},
	"client_tls_protocols":      {"secure", "Go's TLS defaults apply (TLS 1.2 and newer)", true},
	"client_tls_ciphers":        {"default", "Go's TLS defaults apply", true},
	"client_tls13_ciphers":      {"", "Go's TLS defaults apply", true},
	"client_tls_dheparams":      {"auto", "Go's TLS defaults apply", true},
	"client_tls_ecdhcurve":      {"auto", "Go's TLS defaults apply", true},
	"server_tls_protocols":      {"secure", "Go's TLS defaults apply (TLS 1.2 and newer)", true},
	"server_tls_ciphers":        {"default", "Go's TLS defaults apply", true},
	"server_tls13_ciphers":      {"", "Go's TLS defaults apply", true},
}

// strtol reads a whole number as PgBouncer does (C's strtol with base 0,
// the whole value used): decimal, 0x hexadecimal or 0 octal, with an
// optional sign, within 32 bits; not Go's 1_000, 0o7 or 0b1.
func strtol(v string) (int64, error) {
	s, neg := v, false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s, neg = s[1:], s[0] == '-'
	}
	base := 10
	switch {
	case len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X"):
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	// A base other than 0 takes no prefix, sign or underscore.
	n, err := strconv.ParseInt(s, base, 64)
	if err == nil && (s == "" || s[0] == '+' || s[0] == '-') {
		err = strconv.ErrSyntax
	}
	if neg {
		n = -n
	}
	if err == nil && (n < math.MinInt32 || n > math.MaxInt32) {
		err = strconv.ErrRange
	}
	if err != nil {
		return 0, fmt.Errorf("%q: not a whole number as PgBouncer reads one", v)
	}
	return n, nil
}
