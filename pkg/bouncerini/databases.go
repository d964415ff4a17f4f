// The [databases] and [users] sections: the servers, and per-pool settings.

package bouncerini

import (
	"errors"
	"fmt"
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

// serverParams are the keys of an entry that go into its URL:
// load_balance_hosts, connect_query and the per-database auth query
// settings for qprouter, and the settings
// PgBouncer asks of its server connections, which pgx sends in the
// startup packet.
var serverParams = []string{"load_balance_hosts", "connect_query", "auth_user", "auth_query", "auth_dbname",
	"client_encoding", "datestyle", "timezone", "application_name"}

// databases maps [databases]: the * entry becomes the server URL, every
// other entry a database of its own with its server (host, port, the
// database there, a forced user and its password), as PgBouncer serves
// them. Without a * entry other database names are refused, as in
// PgBouncer.
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
	for _, k := range keys {
		name := unquoteKey(k.Name())
		at := "[databases] " + name
		params, err := connString(k.Value())
		if err != nil {
			m.refuseDatabase(name, "%s = %s: %v", at, k.Value(), err)
			continue
		}
		host, port := params["host"], params["port"]
		if host == "" {
			host = server.socketDir // PgBouncer's default: its own Unix socket directory
		}
		if port == "" {
			port = "5432"
		}
		if lb, ok := params["load_balance_hosts"]; ok && lb != "round-robin" && lb != "disable" {
			m.refuseDatabase(name, "%s: load_balance_hosts=%s: want round-robin or disable", at, lb)
			continue
		}
		if n, err := strconv.ParseInt(port, 10, 32); err != nil || n < 1 || n > 65535 {
			m.refuseDatabase(name, "%s: port=%s: want a port number", at, port)
			continue
		}
		handled := []string{"host", "port", "dbname", "password", "user", "pool_size", "min_pool_size", "pool_mode",
			"server_lifetime", "query_wait_timeout", "reserve_pool", "reserve_pool_size", "max_db_connections", "max_db_client_connections"}
		if _, ok := params["password"]; ok && params["user"] == "" {
			// PgBouncer uses an entry's password only with its user (the
			// forced user's); here it would be every client's.
			m.warn("%s: password= without user= is not used, as in PgBouncer: each client logs in with its own password", at)
			delete(params, "password")
		}
		if name == "*" {
			if db, ok := params["dbname"]; ok {
				m.refuse("server_url", "%s: dbname=%s: the * entry serves each database under its own name", at, db)
				continue
			}
			if u, ok := params["user"]; ok {
				m.warn("%s: user=%s is not forced: qprouter logs in to the server of * as each client's own user (give the database an entry of its own to force a user)", at, u)
			}
			m.set("server_url", serverURL(host, port, "", "", params["password"], params, server.params))
		} else {
			if m.s.Databases == nil {
				m.s.Databases = map[string]string{}
			}
			m.s.Databases[name] = serverURL(host, port, params["dbname"], params["user"], params["password"], params, server.params)
		}
		m.poolParams(at, name, params)
		m.otherParams(at, params, append(handled, serverParams...)...)
	}
}

// refuseDatabase records an entry qprouter cannot serve; nothing above the
// file replaces it.
func (m *mapper) refuseDatabase(name, format string, args ...any) {
	if name == "*" {
		m.refuse("server_url", format+" (or give --server-url)", args...)
		return
	}
	m.s.PoolErrors = append(m.s.PoolErrors, fmt.Errorf("pgbouncer.ini %s: "+format, append([]any{m.path}, args...)...))
}

// serverURL is a [databases] entry as a postgres:// URL: host a name, an
// address, a Unix socket directory ("": the client library's default
// ones) or a comma-separated list of them (each on port), with the
// [pgbouncer] TLS and timeout parameters.
func serverURL(host, port, dbname, user, password string, entry map[string]string, params url.Values) string {
	u := url.URL{Scheme: "postgres", Path: "/" + dbname}
	q := url.Values{}
	for k, v := range params {
		q[k] = v
	}
	for _, k := range serverParams {
		if v, ok := entry[k]; ok {
			q.Set(k, v)
		}
	}
	hosts := strings.Split(host, ",")
	switch {
	case host == "" || strings.HasPrefix(host, "/"):
		if host != "" {
			q.Set("host", host)
		}
		q.Set("port", port)
	default:
		for i, h := range hosts {
			hosts[i] = net.JoinHostPort(strings.TrimSpace(h), port)
		}
		u.Host = strings.Join(hosts, ",")
	}
	switch {
	case password != "":
		u.User = url.UserPassword(user, password)
	case user != "":
		u.User = url.User(user)
	}
	// Encode writes a space as '+', which libpq and pgx read as a plus.
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String()
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

// otherParams lists the connection-string keys of the entry at that
// qprouter does not know, besides handled, as unknown.
func (m *mapper) otherParams(at string, params map[string]string, handled ...string) {
	for _, k := range sortedKeys(params) {
		if !slices.Contains(handled, k) {
			m.unknown = append(m.unknown, at+": "+k)
		}
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
