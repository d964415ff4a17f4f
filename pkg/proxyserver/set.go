// The admin console's SET: one setting changed in place.

package proxyserver

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/qpkit/qpkit/pkg/bouncerini"
)

// set is the console's SET key = value. key is a [pgbouncer] setting by
// PgBouncer's name and in its units (seconds; 0 for never), as
// PgBouncer's SET takes it, or else a qprouter config key in flag syntax
// ("30s"; a bare number of seconds also does; a key both have takes
// either). The configuration in force changes as a reload would change
// it, without reading the config file; the next reload reads the file
// again and its values win, as after PgBouncer's SET.
func (s *Server) set(key, value string) error {
	s.changing.Lock()
	defer s.changing.Unlock()
	to, v, known, err := bouncerini.Setting(key, value)
	switch {
	case err != nil && isConfigKey(key):
		to, v = key, value // qprouter's syntax ("2m"), or its error
	case err != nil:
		return err
	case !known:
		to, v = key, value
	}
	if fixedAtStart[to] {
		return fmt.Errorf("%s changes only at a restart", key)
	}
	c, _ := s.get()
	if err := setField(&c, to, v); err != nil {
		return err
	}
	if err := c.Check(); err != nil {
		return err
	}
	if why := s.restartOnly(c); why != "" {
		// A reload keeps the old value with a warning; a SET answering
		// SET would claim a change (new HBA reject rules) that is not made.
		return fmt.Errorf("%s: %s", key, why)
	}
	if err := s.apply(c); err != nil {
		return err
	}
	s.proxy.Reconfigure()
	if to == "server_url" {
		v = redact(v)
	}
	s.log.Info("console: SET", "key", to, "value", v)
	return nil
}

// restartOnly says why nc cannot take effect before a restart ("": it
// can): it turns on or off what is decided at the start (apply keeps
// those as they were).
func (s *Server) restartOnly(nc Config) string {
	switch {
	case (nc.AuthHBAFile == "") != (s.opts.Config.AuthHBAFile == ""):
		return "auth_hba_file is turned on or off only at a restart"
	case (s.cert != nil) != (nc.TLSCert != ""):
		return "TLS (tls_cert, tls_key) is turned on or off only at a restart"
	case (s.cas.Load() != nil) != (nc.TLSCAFile != ""):
		return "tls_ca_file is turned on or off only at a restart"
	}
	return ""
}

// configKeys are the config keys of Config's fields, by field index ("":
// none).
var configKeys = func() []string {
	t := reflect.TypeFor[Config]()
	keys := make([]string, t.NumField())
	for i := range keys {
		keys[i], _, _ = strings.Cut(t.Field(i).Tag.Get("toml"), ",")
	}
	return keys
}()

// isConfigKey reports whether key is a config key of a Config field.
func isConfigKey(key string) bool { return key != "" && slices.Contains(configKeys, key) }

// maxSeconds is the most seconds a time.Duration holds (about 292 years).
const maxSeconds = float64(math.MaxInt64 / int64(time.Second))

// setField sets c's field whose config key is key from value in flag
// syntax.
func setField(c *Config, key, value string) error {
	v := reflect.ValueOf(c).Elem()
	for i, k := range configKeys {
		if k != key || k == "" {
			continue
		}
		f := v.Field(i)
		switch {
		case f.Type() == reflect.TypeFor[time.Duration]():
			d, err := time.ParseDuration(value)
			if err != nil {
				secs, ferr := strconv.ParseFloat(value, 64)
				if ferr != nil || !(secs >= 0 && secs <= maxSeconds) { // NaN fails both
					return fmt.Errorf("%s = %s: want a duration (30s, 1m) or seconds", key, value)
				}
				d = time.Duration(secs * float64(time.Second))
			}
			f.SetInt(int64(d))
		case f.Kind() == reflect.String:
			f.SetString(value)
		case f.Kind() == reflect.Int:
			n, err := strconv.ParseInt(value, 0, 32)
			if err != nil {
				return fmt.Errorf("%s = %s: want a whole number", key, value)
			}
			f.SetInt(n)
		case f.Kind() == reflect.Bool:
			b, ok := parseBool(value)
			if !ok {
				return fmt.Errorf("%s = %s: want on or off", key, value)
			}
			f.SetBool(b)
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
			var names []string
			for _, n := range strings.Split(value, ",") {
				if n = strings.TrimSpace(n); n != "" {
					names = append(names, n)
				}
			}
			f.Set(reflect.ValueOf(names))
		default:
			return fmt.Errorf("%s is a table: it changes through the config file (then RELOAD)", key)
		}
		return nil
	}
	return fmt.Errorf("unknown setting %q (SHOW CONFIG lists them)", key)
}

// parseBool reads on/off, true/false, yes/no and 1/0.
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "on", "true", "yes", "1":
		return true, true
	case "off", "false", "no", "0":
		return false, true
	}
	return false, false
}
