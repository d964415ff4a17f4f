// Session settings: the GUCs clients SET, SHOW and expect in ParameterStatus.

package duckwire

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/qpkit/qpkit/pkg/pgwire"
)

// reportedGUCs are the settings PostgreSQL 15 reports with ParameterStatus
// at startup and whenever they change (GUC_REPORT), in canonical case.
var reportedGUCs = []string{
	"application_name", "client_encoding", "DateStyle", "default_transaction_read_only",
	"in_hot_standby", "integer_datetimes", "IntervalStyle", "is_superuser",
	"server_encoding", "server_version", "session_authorization",
	"standard_conforming_strings", "TimeZone",
}

// settings are one session's GUC values, keyed by lower-case name.
type settings struct {
	vals  map[string]string
	names map[string]string // lower-case -> canonical
	loc   *time.Location
	db    string // the database the client asked for, for current_database()
}

func newSettings(cfg Config, startup map[string]string) *settings {
	s := &settings{vals: map[string]string{}, names: map[string]string{}}
	for k, v := range map[string]string{
		"server_version": ServerVersion, "server_version_num": ServerVersionNum,
		"server_encoding": "UTF8", "client_encoding": "UTF8",
		"DateStyle": "ISO, MDY", "IntervalStyle": "postgres", "integer_datetimes": "on",
		"TimeZone": cfg.TimeZone, "standard_conforming_strings": "on",
		"application_name": "", "is_superuser": "off", "session_authorization": startup["user"],
		"default_transaction_read_only": "on", "transaction_read_only": "on", "in_hot_standby": "off",
		"transaction_isolation": "repeatable read", "default_transaction_isolation": "repeatable read",
		"extra_float_digits": "1", "search_path": `"$user", public`, "statement_timeout": "0",
		"lc_messages": "C", "lc_monetary": "C", "lc_numeric": "C", "lc_time": "C", "lc_collate": "C", "lc_ctype": "C",
		"max_identifier_length": "63", "block_size": "8192", "bytea_output": "hex",
		"idle_in_transaction_session_timeout": "0", "lock_timeout": "0", "max_index_keys": "32",
	} {
		s.names[strings.ToLower(k)] = k
		s.vals[strings.ToLower(k)] = v
	}
	s.loc, _ = time.LoadLocation(cfg.TimeZone)
	s.db = startup["database"]
	for k, v := range startup {
		switch k {
		case "user", "database", "options", "replication":
			continue
		}
		s.set(k, v) // unknown or invalid startup settings are kept as sent
	}
	for k, v := range pgwire.OptionSettings(startup["options"]) {
		s.set(k, v)
	}
	return s
}

func (s *settings) get(name string) string { return s.vals[strings.ToLower(name)] }

func (s *settings) known(name string) bool {
	_, ok := s.vals[strings.ToLower(name)]
	return ok
}

// canonical is the name as PostgreSQL spells it in ParameterStatus.
func (s *settings) canonical(name string) string {
	if c, ok := s.names[strings.ToLower(name)]; ok {
		return c
	}
	return strings.ToLower(name)
}

// set stores a value without checking it.
func (s *settings) set(name, value string) {
	k := strings.ToLower(name)
	if _, ok := s.names[k]; !ok {
		s.names[k] = k
	}
	s.vals[k] = value
	if k == "timezone" {
		if loc, err := loadZone(value); err == nil {
			s.loc = loc
		}
	}
}

// reported is the startup ParameterStatus set.
func (s *settings) reported() map[string]string {
	m := make(map[string]string, len(reportedGUCs))
	for _, k := range reportedGUCs {
		m[k] = s.get(k)
	}
	return m
}

func isReported(name string) bool {
	for _, k := range reportedGUCs {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// all lists every setting, sorted by name, for SHOW ALL.
func (s *settings) all() [][2]string {
	out := make([][2]string, 0, len(s.vals))
	for k, v := range s.vals {
		out = append(out, [2]string{s.names[k], v})
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i][0]) < strings.ToLower(out[j][0]) })
	return out
}

// statementTimeout is statement_timeout in milliseconds (0: none).
func (s *settings) statementTimeout() int64 {
	ms, _ := parseDurationMS(s.get("statement_timeout"))
	return ms
}

// parseDurationMS reads a PostgreSQL time setting: a number of
// milliseconds, or a number with a unit (us, ms, s, min, h, d).
func parseDurationMS(v string) (int64, bool) {
	v = strings.TrimSpace(v)
	i := 0
	for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == '.') {
		i++
	}
	n, err := strconv.ParseFloat(v[:i], 64)
	if err != nil {
		return 0, false
	}
	mult := 1.0
	switch strings.TrimSpace(strings.ToLower(v[i:])) {
	case "", "ms":
	case "us":
		mult = 0.001
	case "s":
		mult = 1000
	case "min":
		mult = 60_000
	case "h":
		mult = 3_600_000
	case "d":
		mult = 86_400_000
	default:
		return 0, false
	}
	return int64(n * mult), true
}

// loadZone accepts an IANA name, UTC/GMT, or an offset (zoneOffset).
func loadZone(name string) (*time.Location, error) {
	if strings.EqualFold(name, "utc") || strings.EqualFold(name, "gmt") || strings.EqualFold(name, "z") {
		return time.UTC, nil
	}
	if east, ok, err := zoneOffset(name); ok {
		if err != nil {
			return nil, err
		}
		return time.FixedZone(name, east), nil
	}
	return time.LoadLocation(name)
}

// zoneOffset reads an offset as PostgreSQL's check_timezone does: a
// value that is a plain number ("+02", "-3.5") is hours east of UTC, SQL's
// sign; "[+-]hh:mm[:ss]" is a POSIX zone, whose positive offsets are west
// ("-05:30" is India's time). east is in seconds; ok says name is an
// offset at all.
func zoneOffset(name string) (east int, ok bool, err error) {
	if name == "" || (name[0] != '+' && name[0] != '-') {
		return 0, false, nil
	}
	if h, err := strconv.ParseFloat(name, 64); err == nil {
		return int(h * 3600), true, nil
	}
	parts := strings.Split(name[1:], ":")
	if len(parts) > 3 {
		return 0, true, fmt.Errorf("bad offset %q", name)
	}
	secs := 0
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return 0, true, fmt.Errorf("bad offset %q", name)
		}
		secs += n * []int{3600, 60, 1}[i]
	}
	if name[0] == '+' { // POSIX: west of UTC
		secs = -secs
	}
	return secs, true, nil
}
