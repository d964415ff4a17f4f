// One [pgbouncer] setting on its own, for the admin console's SET.

package bouncerini

import (
	"fmt"
	"strings"
)

// Setting maps one [pgbouncer] key and value, as PgBouncer's console SET
// takes them (its names and units: seconds, 0 for "never"), to the
// qprouter setting they mean: its config key and value in flag syntax.
// known is false for a key that maps to no qprouter setting of its own
// (unknown to PgBouncer's section, ignored by qprouter, or part of the
// server URL); err is a value qprouter refuses, or, with known false, why
// qprouter has no use for a PgBouncer key's value.
func Setting(key, value string) (to, v string, known bool, err error) {
	base := mapOne(nil)
	one := mapOne(map[string]string{key: value})
	for k, e := range one.Errors {
		if base.Errors[k] == nil {
			return k, "", true, e
		}
	}
	changed := ""
	for k, val := range one.Values {
		if bv, ok := base.Values[k]; !ok || bv != val {
			if changed != "" {
				return "", "", false, nil // several settings: not one of its own
			}
			changed = k
		}
	}
	if changed == "" {
		if len(one.Notes) > len(base.Notes) {
			// a PgBouncer key whose value qprouter has no use for: say why
			msg := strings.TrimPrefix(one.Notes[len(one.Notes)-1].Msg, "pgbouncer.ini: ")
			if !strings.HasPrefix(msg, unknownKeys) {
				return key, "", false, fmt.Errorf("%s = '%s' changes nothing: %s", key, value, msg)
			}
		}
		return "", "", false, nil
	}
	return changed, one.Values[changed], true, nil
}

// mapOne maps a [pgbouncer] section of kv alone.
func mapOne(kv map[string]string) *Settings {
	m := &mapper{s: &Settings{Values: map[string]string{}, Errors: map[string]error{}, Pools: map[string]map[string]string{}}}
	if kv == nil {
		kv = map[string]string{}
	}
	m.pgbouncer(kv)
	return m.s
}
