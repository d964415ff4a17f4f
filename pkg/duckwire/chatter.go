// Session chatter: SET, SHOW and the functions drivers call, answered from the session's settings.

package duckwire

import (
	"context"
	"database/sql/driver"
	"fmt"
	"maps"
	"strings"
)

// applySet handles SET/RESET: known settings are checked where clients
// depend on the value, DuckDB follows TimeZone, and reported settings are
// echoed with ParameterStatus as PostgreSQL does.
func (ss *session) applySet(st statement) error {
	if st.local {
		return ss.setLocal(st)
	}
	if ss.inBlock() && st.name != "" {
		// A plain SET inside a block is also what SET LOCAL returns to.
		k := strings.ToLower(st.name)
		if _, ok := ss.block.local[k]; ok {
			defer func() { ss.block.local[k] = ss.settings.get(k) }()
		}
	}
	if st.name == "" { // RESET ALL: back to the session's defaults, fixed settings untouched
		fresh := newSettings(ss.srv.cfg, ss.startup)
		for _, kv := range fresh.all() {
			if fixedSettings[strings.ToLower(kv[0])] || ss.settings.get(kv[0]) == kv[1] {
				continue
			}
			if err := ss.setOne(kv[0], kv[1]); err != nil {
				return err
			}
		}
		return nil
	}
	value := st.value
	if st.reset {
		value = newSettings(ss.srv.cfg, ss.startup).get(st.name)
	}
	return ss.setOne(st.name, value)
}

// setLocal runs SET LOCAL: only inside a block (outside, PostgreSQL warns
// and changes nothing), remembering the session value to return to.
func (ss *session) setLocal(st statement) error {
	if !ss.inBlock() {
		ss.notice("WARNING", "25P01", "SET LOCAL can only be used in transaction blocks")
		return nil
	}
	k := strings.ToLower(st.name)
	prior, had := ss.settings.vals[k], ss.settings.known(k)
	value := st.value
	if st.reset {
		value = newSettings(ss.srv.cfg, ss.startup).get(st.name)
	}
	if err := ss.setOne(st.name, value); err != nil {
		return err
	}
	if _, ok := ss.block.local[k]; !ok {
		if !had {
			prior = unsetSetting
		}
		ss.block.local[k] = prior
	}
	return nil
}

// setConfig answers SELECT set_config('name', 'value', is_local), ...:
// each call as its SET or SET LOCAL, one row of the new values. Outside a
// block, as in PostgreSQL's implicit transaction, a local change lasts
// the statement only and an error undoes the statement's changes.
func (ss *session) setConfig(st statement) (resultSet, error) {
	prior := maps.Clone(ss.settings.vals)
	var undo []string
	row := make([]string, len(st.sets))
	for i, set := range st.sets {
		if set.local && !ss.inBlock() {
			set.local = false
			undo = append(undo, strings.ToLower(set.name))
		}
		if err := ss.applySet(set); err != nil {
			if !ss.inBlock() {
				ss.restoreSettings(prior)
			}
			return nil, err
		}
		row[i] = ss.settings.get(set.name)
	}
	for _, k := range undo {
		if v, ok := prior[k]; ok {
			ss.restoreSetting(k, v)
		} else {
			ss.restoreSetting(k, unsetSetting)
		}
	}
	return textRows(st.cols, row), nil
}

// fixedSettings cannot be changed by a session.
var fixedSettings = map[string]bool{
	"session_authorization": true, "server_version": true, "server_version_num": true, "server_encoding": true,
	"integer_datetimes": true, "is_superuser": true, "block_size": true, "max_identifier_length": true,
	"max_index_keys": true, "lc_collate": true, "lc_ctype": true,
}

func (ss *session) setOne(name, value string) error {
	if strings.EqualFold(name, "session_authorization") && value == ss.startup["user"] {
		// SET SESSION AUTHORIZATION DEFAULT (or the session user), RESET
		// SESSION AUTHORIZATION: allowed to anyone, a no-op here.
		return nil
	}
	if fixedSettings[strings.ToLower(name)] {
		return errorf("55P02", fmt.Sprintf("parameter %q cannot be changed now", name))
	}
	switch strings.ToLower(name) {
	case "client_encoding":
		switch strings.ToUpper(strings.ReplaceAll(value, "-", "")) {
		case "UTF8", "UNICODE":
			value = "UTF8"
		default:
			return errorf(codeNotSupported, fmt.Sprintf("client_encoding %q is not supported: qpanalytics speaks UTF8 only", value))
		}
	case "datestyle":
		if !strings.Contains(strings.ToUpper(value), "ISO") {
			return errorf(codeNotSupported, fmt.Sprintf("DateStyle %q is not supported: qpanalytics prints dates in ISO style", value))
		}
		upper := strings.ToUpper(value)
		value = "ISO, MDY"
		if strings.Contains(upper, "DMY") {
			value = "ISO, DMY"
		}
	case "intervalstyle":
		if !strings.EqualFold(value, "postgres") {
			return errorf(codeNotSupported, fmt.Sprintf("IntervalStyle %q is not supported: qpanalytics prints intervals in postgres style", value))
		}
	case "timezone":
		if _, err := loadZone(value); err != nil {
			return errorf(codeInvalidParam, fmt.Sprintf("invalid value for parameter \"TimeZone\": %q", value))
		}
		if err := ss.applyTimeZone(value); err != nil {
			return err
		}
	case "statement_timeout":
		if _, ok := parseDurationMS(value); !ok {
			return errorf(codeInvalidParam, fmt.Sprintf("invalid value for parameter \"statement_timeout\": %q", value))
		}
	case "extra_float_digits":
		// Accepted: output is always the shortest exact form (the default 1).
	case "transaction_read_only", "default_transaction_read_only":
		if v := strings.ToLower(value); v == "off" || v == "false" || v == "0" {
			return errorf(codeReadOnly, "qpanalytics is read-only: transaction_read_only cannot be turned off")
		}
	}
	ss.settings.set(name, value)
	if isReported(name) {
		ss.parameterStatus(ss.settings.canonical(name), ss.settings.get(name))
	}
	return nil
}

// applyTimeZone sets DuckDB's TimeZone too, so timestamptz arithmetic and
// casts follow the session (only IANA names reach DuckDB).
func (ss *session) applyTimeZone(tz string) error {
	if tz == "" {
		return nil
	}
	if east, ok, _ := zoneOffset(tz); ok {
		// DuckDB knows fixed offsets as Etc/GMT zones, whole hours only,
		// their sign west as in POSIX (Etc/GMT-2 is two hours east).
		if east%3600 != 0 || east < -12*3600 || east > 14*3600 {
			return errorf(codeInvalidParam, fmt.Sprintf("invalid value for parameter \"TimeZone\": %q (offsets are supported in whole hours, -12 to +14)", tz))
		}
		tz = "Etc/GMT"
		if east != 0 {
			tz = fmt.Sprintf("Etc/GMT%+d", -east/3600)
		}
	}
	if err := execDuck(context.Background(), ss.duck, "SET TimeZone = '"+strings.ReplaceAll(tz, "'", "''")+"'"); err != nil {
		return errorf(codeInvalidParam, fmt.Sprintf("invalid value for parameter \"TimeZone\": %q", tz))
	}
	return nil
}

// showColumns are the columns of SHOW name: SHOW ALL's three, or one
// named as the setting ("" here).
func showColumns(name string) []string {
	if strings.EqualFold(name, "all") {
		return []string{"name", "setting", "description"}
	}
	return []string{""}
}

// show answers SHOW name and SHOW ALL.
func (ss *session) show(name string) (resultSet, error) {
	switch strings.ToLower(name) {
	case "all":
		r := textRows(showColumns(name))
		for _, kv := range ss.settings.all() {
			r.rows = append(r.rows, []driver.Value{kv[0], kv[1], ""})
		}
		return r, nil
	case "timezone":
		name = "TimeZone"
	}
	if !ss.settings.known(name) {
		return nil, errorf(codeUndefinedObject, fmt.Sprintf("unrecognized configuration parameter %q", name))
	}
	// The column is named as PostgreSQL spells the setting (TimeZone).
	return textRows([]string{ss.settings.canonical(name)}, []string{ss.settings.get(name)}), nil
}
