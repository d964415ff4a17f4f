// Operations behaviour a review of 2026-12-05 found wrong; each test's
// comment says what was wrong before the fix.

package bouncerini

import (
	"testing"
)

// Whole numbers are read with Go's strconv.ParseInt(v, 0, 32), which
// also takes Go's own literal forms: digit separators ("1_000") and the
// 0o/0b prefixes. PgBouncer reads them with C's strtol(v, &end, 0) and
// refuses a partial parse (libusual cfparser.c cf_set_int: "reject
// partial parse"), so it does not start with `default_pool_size = 1_0`
// (error: invalid value) while qprouter serves a pool of 10, and
// `max_client_conn = 0b1` (PgBouncer: refused) becomes 1 here.
// docs/qprouter.md: "The file is read as PgBouncer reads it". Expected:
// refused, naming the key, as "20 ; comment" already is.
func TestOpsIntegersAsStrtol(t *testing.T) {
	s := load(t, base+"default_pool_size = 1_0\nmax_client_conn = 0b1\nmin_pool_size = 0o7\n")
	for _, key := range []string{"pool_size", "max_clients", "min_idle"} {
		if v, ok := s.Values[key]; ok {
			t.Errorf("%s = %q taken from a value PgBouncer refuses (errors: %v)", key, v, s.Errors[key])
		}
	}
	// PgBouncer's own forms stay accepted (verified correct).
	s = load(t, base+"default_pool_size = 0x10\nmin_pool_size = 010\nserver_idle_timeout = 1.5\n")
	if s.Values["pool_size"] != "16" || s.Values["min_idle"] != "8" || s.Values["idle_timeout"] != "1.5s" {
		t.Errorf("strtol/strtod forms: %v %v", s.Values, s.Errors)
	}
	// A trailing comment, a unit or quotes make a value PgBouncer refuses
	// (no inline comments, seconds only): refused here too (verified).
	s = load(t, base+"default_pool_size = 20 ; comment\nserver_idle_timeout = 10min\nquery_timeout = '5'\n")
	for _, key := range []string{"pool_size", "idle_timeout", "query_timeout"} {
		if _, ok := s.Values[key]; ok || s.Errors[key] == nil {
			t.Errorf("%s: value %q, error %v; want refused", key, s.Values[key], s.Errors[key])
		}
	}
}
