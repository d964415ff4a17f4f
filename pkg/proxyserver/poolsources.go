// Where per-pool settings come from: the config file's [pools] tables and pgbouncer.ini's per-database entries, layered.

package proxyserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// ReadPools reads the [pools] tables of a TOML config file (the top-level
// keys are kong's; see TOMLResolver).
func ReadPools(r io.Reader) (map[string]PoolSettings, error) {
	text, err := fractionalSeconds(r)
	if err != nil {
		return nil, err
	}
	var f struct {
		Pools map[string]PoolSettings `toml:"pools"`
	}
	md, err := toml.NewDecoder(bytes.NewReader(text)).Decode(&f)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	var unknown []string
	for _, key := range md.Undecoded() {
		if len(key) == 3 && key[0] == "pools" {
			unknown = append(unknown, fmt.Sprintf("pools.%q: %s", key[1], key[2]))
		}
	}
	if len(unknown) > 0 {
		return nil, errors.New("config file: unknown per-pool settings: " + strings.Join(unknown, ", "))
	}
	for name, ps := range f.Pools {
		if err := bareSeconds(md, name, &ps); err != nil {
			return nil, err
		}
	}
	return f.Pools, nil
}

// fractionalSeconds returns the [pools] tables of the TOML file r with
// each duration written as a bare fraction (acquire_timeout = 1.5, which
// the TOML decoder refuses for a time.Duration) turned into a duration
// string ("1.5s"), as the top-level keys read it; the rest is as written.
func fractionalSeconds(r io.Reader) ([]byte, error) {
	var raw struct {
		Pools map[string]map[string]any `toml:"pools"`
	}
	if _, err := toml.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	durations := map[string]bool{}
	t := reflect.TypeFor[PoolSettings]()
	for i := range t.NumField() {
		if t.Field(i).Type == reflect.TypeFor[*time.Duration]() {
			durations[t.Field(i).Tag.Get("toml")] = true
		}
	}
	for pool, kv := range raw.Pools {
		for k, v := range kv {
			f, ok := v.(float64)
			if !ok || !durations[k] {
				continue
			}
			if !(f >= 0 && f <= float64(math.MaxInt64/time.Second)) {
				return nil, fmt.Errorf("config file: pools.%q: %s = %g: want seconds from 0 to %d, or a duration such as \"5s\"", pool, k, f, int64(math.MaxInt64/time.Second))
			}
			kv[k] = time.Duration(f * float64(time.Second)).String()
		}
	}
	var out bytes.Buffer
	if err := toml.NewEncoder(&out).Encode(map[string]any{"pools": raw.Pools}); err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	return out.Bytes(), nil
}

// bareSeconds reads a duration written as a bare whole number as seconds,
// as pgbouncer.ini and the console's SET do (the TOML decoder would take
// nanoseconds: acquire_timeout = 30 would be 30ns).
func bareSeconds(md toml.MetaData, pool string, ps *PoolSettings) error {
	v := reflect.ValueOf(ps).Elem()
	for i := range v.NumField() {
		d, ok := v.Field(i).Interface().(*time.Duration)
		key := v.Type().Field(i).Tag.Get("toml")
		if !ok || d == nil || md.Type("pools", pool, key) != "Integer" {
			continue
		}
		n := int64(*d)
		if n < 0 || n > int64(math.MaxInt64/time.Second) {
			return fmt.Errorf("config file: pools.%q: %s = %d: want seconds from 0 to %d, or a duration such as \"5s\"", pool, key, n, int64(math.MaxInt64/time.Second))
		}
		*d = time.Duration(n) * time.Second
	}
	return nil
}

// PoolsFromValues turns per-pool settings given as text in flag syntax
// (bouncerini's Settings.Pools: table, then config key) into
// PoolSettings.
func PoolsFromValues(vals map[string]map[string]string) (map[string]PoolSettings, error) {
	out := make(map[string]PoolSettings, len(vals))
	for table, kv := range vals {
		var o PoolSettings
		for k, v := range kv {
			at := fmt.Sprintf("pools.%q: %s = %s", table, k, v)
			num := func(dst **int) error {
				n, err := strconv.Atoi(v)
				if err != nil {
					return fmt.Errorf("%s: want a whole number", at)
				}
				*dst = &n
				return nil
			}
			dur := func(dst **time.Duration) error {
				d, err := time.ParseDuration(v)
				if err != nil {
					return fmt.Errorf("%s: %w", at, err)
				}
				*dst = &d
				return nil
			}
			var err error
			switch k {
			case "pool_mode":
				o.PoolMode = &v
			case "reset_query":
				o.ResetQuery = &v
			case "pool_size":
				err = num(&o.PoolSize)
			case "min_idle":
				err = num(&o.MinIdle)
			case "max_pool_clients":
				err = num(&o.MaxPoolClients)
			case "acquire_timeout":
				err = dur(&o.AcquireTimeout)
			case "idle_timeout":
				err = dur(&o.IdleTimeout)
			case "max_lifetime":
				err = dur(&o.MaxLifetime)
			case "health_check_after":
				err = dur(&o.HealthCheckAfter)
			case "reserve_pool_size":
				err = num(&o.ReservePoolSize)
			case "reserve_pool_timeout":
				err = dur(&o.ReservePoolTimeout)
			case "max_db_connections":
				err = num(&o.MaxDBConnections)
			case "max_user_connections":
				err = num(&o.MaxUserConnections)
			case "max_db_client_connections":
				err = num(&o.MaxDBClients)
			case "max_user_client_connections":
				err = num(&o.MaxUserClients)
			default:
				err = fmt.Errorf("%s: not a per-pool setting", at)
			}
			if err != nil {
				return nil, err
			}
		}
		out[table] = o
	}
	return out, nil
}

// MergePools is over's tables, each with the fields it does not set
// taken from under's table of the same name, and under's other tables.
func MergePools(over, under map[string]PoolSettings) map[string]PoolSettings {
	if len(under) == 0 {
		return over
	}
	out := make(map[string]PoolSettings, len(over)+len(under))
	for k, u := range under {
		out[k] = u
	}
	for k, o := range over {
		ov, uv := reflect.ValueOf(&o).Elem(), reflect.ValueOf(out[k])
		for f := range ov.NumField() {
			if ov.Field(f).IsNil() {
				ov.Field(f).Set(uv.Field(f))
			}
		}
		out[k] = o
	}
	return out
}
