// The [databases] and [users] sections: one server URL, or a refusal.

package bouncerini

import (
	"errors"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/ini.v1"
)

// poolKeys are the connection-string keys of PgBouncer's per-database
// (and per-user) settings that qprouter's per-pool tables take, with
// their qprouter names.
var poolKeys = map[string]string{"pool_size": "pool_size", "min_pool_size": "min_idle", "pool_mode": "pool_mode",
	"server_lifetime": "max_lifetime", "query_wait_timeout": "acquire_timeout",
	"reserve_pool": "reserve_pool_size", "reserve_pool_size": "reserve_pool_size", "max_db_connections": "max_db_connections",
	"max_db_client_connections": "max_db_client_connections"}

// perPool are the other per-database (and per-user) settings: ignored.
var perPool = []string{"load_balance_hosts"}

// onServer are the keys PgBouncer applies to its server connections.
var onServer = []string{"auth_user", "auth_dbname", "auth_query", "connect_query", "client_encoding", "datestyle",
	"timezone", "application_name"}

// databases builds the server URL from [databases]: every entry must
// point at one host and port (with one password, if any) and keep its
// name as the database name.
func (m *mapper) databases(f *ini.File, server serverSide) {
	sec, err := f.GetSection("databases")
	var keys []*ini.Key
	if err == nil {
		keys = sec.Keys()
	}
	if len(keys) == 0 {
		m.refuse("server_url", "no [databases] entry to take the server from: add one (* = host=... port=...) or give --server-url")
		return
	}
	type target struct{ name, host, port, password string }
	var first *target
	var names []string
	wildcard := false
	for _, k := range keys {
		name := unquoteKey(k.Name())
		at := "[databases] " + name
		params, err := connString(k.Value())
		if err != nil {
			m.refuse("server_url", "%s = %s: %v", at, k.Value(), err)
			continue
		}
		if name == "*" {
			wildcard = true
		} else {
			names = append(names, name)
		}
		t := target{name: name, host: params["host"], port: params["port"], password: params["password"]}
		if t.host == "" {
			t.host = server.socketDir // PgBouncer's default: its own Unix socket directory
		}
		if t.port == "" {
			t.port = "5432"
		}
		if strings.Contains(t.host, ",") {
			m.refuse("server_url", "%s: host=%s lists several hosts; qprouter connects to one server", at, t.host)
			continue
		}
		if n, err := strconv.ParseInt(t.port, 10, 32); err != nil || n < 1 || n > 65535 {
			m.refuse("server_url", "%s: port=%s: want a port number", at, t.port)
			continue
		}
		if db, ok := params["dbname"]; ok && (name == "*" || db != name) {
			m.refuse("server_url", "%s: dbname=%s renames the database; qprouter passes the client's database name to the server (no aliases)", at, db)
			continue
		}
		switch {
		case first == nil:
			first = &t
		case t.host != first.host || t.port != first.port:
			m.refuse("server_url", "%s points at %s, [databases] %s at %s: qprouter serves one server (one --server-url)",
				at, hostPort(t.host, t.port), first.name, hostPort(first.host, first.port))
		case t.password != "" && first.password != "" && t.password != first.password:
			m.refuse("server_url", "%s and [databases] %s have different passwords: qprouter has one server URL; keep one password= or put each user's password in auth_file", at, first.name)
		case first.password == "":
			first.password = t.password
		}
		m.poolParams(at, name, params)
		if u, ok := params["user"]; ok {
			m.warn("%s: user=%s is not forced: qprouter logs in to the server as each client's own user (clients logging in as %s are not affected)", at, u, u)
		}
		m.otherParams(at, params, "host", "port", "dbname", "password", "user", "pool_size", "min_pool_size", "pool_mode",
			"server_lifetime", "query_wait_timeout", "reserve_pool", "reserve_pool_size", "max_db_connections", "max_db_client_connections")
	}
	if first == nil {
		return
	}
	if !wildcard {
		m.warn("[databases] lists %s and no *: qprouter serves every database of the server, not only these", strings.Join(names, ", "))
	}
	u := url.URL{Scheme: "postgres", Path: "/"}
	q := url.Values{}
	for k, v := range server.params {
		q[k] = v
	}
	switch {
	case first.host == "" || strings.HasPrefix(first.host, "/"):
		// A Unix socket directory (or the client library's default ones).
		if first.host != "" {
			q.Set("host", first.host)
		}
		q.Set("port", first.port)
	default:
		u.Host = net.JoinHostPort(first.host, first.port)
	}
	if first.password != "" {
		u.User = url.UserPassword("", first.password)
	}
	u.RawQuery = q.Encode()
	m.set("server_url", u.String())
}

// poolParams maps the per-pool keys of the entry at (database or user
// name, as a per-pool table name) to qprouter's per-pool settings. The
// wildcard database's apply to every database PgBouncer creates from it,
// which qprouter has no table for: they are ignored with a warning.
func (m *mapper) poolParams(at, table string, params map[string]string) {
	var ignored []string
	for _, k := range sortedKeys(params) {
		key, ok := poolKeys[k]
		if !ok {
			continue
		}
		if table == "*" {
			ignored = append(ignored, k+"="+params[k])
			continue
		}
		m.poolValue(at, table, k, key, params[k])
	}
	if len(ignored) > 0 {
		m.warn("%s: %s ignored: the [pgbouncer] settings apply to databases without an entry of their own", at, strings.Join(ignored, " "))
	}
}

// users maps [users]: a user's pool_mode, max_user_connections and
// max_user_client_connections become the "*/user" per-pool table; other
// per-user settings are ignored.
func (m *mapper) users(f *ini.File) {
	sec, err := f.GetSection("users")
	if err != nil {
		return
	}
	for _, k := range sec.Keys() {
		at := "[users] " + unquoteKey(k.Name())
		params, err := connString(k.Value())
		if err != nil {
			m.warn("%s = %s ignored: %v", at, k.Value(), err)
			continue
		}
		keys := []string{"pool_mode", "max_user_connections", "max_user_client_connections"}
		for _, key := range keys {
			if v, ok := params[key]; ok {
				m.poolValue(at, "*/"+unquoteKey(k.Name()), key, key, v)
			}
		}
		m.otherParams(at, params, keys...)
	}
}

// otherParams warns about the connection-string keys qprouter ignores in
// the entry at, besides handled.
func (m *mapper) otherParams(at string, params map[string]string, handled ...string) {
	var pool, server []string
	for _, k := range sortedKeys(params) {
		switch {
		case slices.Contains(handled, k):
		case slices.Contains(perPool, k):
			pool = append(pool, k+"="+params[k])
		case slices.Contains(onServer, k):
			server = append(server, k+"="+params[k])
		default:
			m.unknown = append(m.unknown, at+": "+k)
		}
	}
	if len(pool) > 0 {
		m.warn("%s: %s ignored: qprouter's per-pool settings are pool_size, min_pool_size, pool_mode, server_lifetime, query_wait_timeout, reserve_pool, max_db_connections and max_db_client_connections ([users]: pool_mode, max_user_connections and max_user_client_connections)", at, strings.Join(pool, " "))
	}
	if len(server) > 0 {
		m.warn("%s: %s ignored: qprouter takes users from auth_file only and sets on the server only what each client sends", at, strings.Join(server, " "))
	}
}

// connString reads a PgBouncer connection string: key=value pairs
// separated by spaces, a value in single quotes when it has spaces (a
// quote inside doubled).
func connString(s string) (map[string]string, error) {
	out := map[string]string{}
	isSpace := func(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f' }
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			return out, nil
		}
		start := i
		for i < len(s) && s[i] != '=' && !isSpace(s[i]) {
			i++
		}
		key := s[start:i]
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if key == "" || i == len(s) || s[i] != '=' {
			return nil, errors.New("want key=value pairs")
		}
		i++
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		var val strings.Builder
		if i < len(s) && s[i] == '\'' {
			i++
			for {
				if i == len(s) {
					return nil, errors.New("a quoted value is not closed")
				}
				if s[i] == '\'' {
					if i+1 < len(s) && s[i+1] == '\'' {
						val.WriteByte('\'')
						i += 2
						continue
					}
					i++
					break
				}
				val.WriteByte(s[i])
				i++
			}
		} else {
			for i < len(s) && !isSpace(s[i]) {
				val.WriteByte(s[i])
				i++
			}
		}
		if val.Len() == 0 {
			return nil, errors.New(key + "= has no value")
		}
		out[key] = val.String()
	}
}

// unquoteKey removes the single quotes PgBouncer allows around a key.
func unquoteKey(k string) string {
	if len(k) >= 2 && k[0] == '\'' && k[len(k)-1] == '\'' {
		return k[1 : len(k)-1]
	}
	return k
}

func hostPort(host, port string) string {
	if host == "" {
		return "the default Unix socket, port " + port
	}
	if strings.HasPrefix(host, "/") {
		return host + " port " + port
	}
	return net.JoinHostPort(host, port)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
