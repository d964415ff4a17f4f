// Where per-pool settings come from: the config file's [pools] tables and pgbouncer.ini's per-database entries, layered.

package proxyserver

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// ReadPools reads the [pools] tables of a TOML config file (the top-level
// keys are kong's; see TOMLResolver).
func ReadPools(r io.Reader) (map[string]PoolSettings, error) {
	var f struct {
		Pools map[string]poolSettingsFile `toml:"pools"`
	}
	md, err := toml.NewDecoder(r).Decode(&f)
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
	out := make(map[string]PoolSettings, len(f.Pools))
	for name, pf := range f.Pools {
		out[name] = pf.settings()
	}
	return out, nil
}

// poolSettingsFile is PoolSettings as a config file writes it, field for
// field (TestPoolSettingsFileFields), with durations that are seconds
// when written as a bare number, whole or fractional, as in pgbouncer.ini
// and at the top level (the TOML decoder would take a whole number as
// nanoseconds, and refuse a fraction).
type poolSettingsFile struct {
	PoolMode           *string       `toml:"pool_mode"`
	PoolSize           *int          `toml:"pool_size"`
	MinIdle            *int          `toml:"min_idle"`
	MaxPoolClients     *int          `toml:"max_pool_clients"`
	AcquireTimeout     *fileDuration `toml:"acquire_timeout"`
	IdleTimeout        *fileDuration `toml:"idle_timeout"`
	MaxLifetime        *fileDuration `toml:"max_lifetime"`
	HealthCheckAfter   *fileDuration `toml:"health_check_after"`
	ResetQuery         *string       `toml:"reset_query"`
	ReservePoolSize    *int          `toml:"reserve_pool_size"`
	ReservePoolTimeout *fileDuration `toml:"reserve_pool_timeout"`
	MaxDBConnections   *int          `toml:"max_db_connections"`
	MaxUserConnections *int          `toml:"max_user_connections"`
	MaxDBClients       *int          `toml:"max_db_client_connections"`
	MaxUserClients     *int          `toml:"max_user_client_connections"`
}

// settings is pf as PoolSettings.
func (pf poolSettingsFile) settings() PoolSettings {
	var ps PoolSettings
	from, to := reflect.ValueOf(pf), reflect.ValueOf(&ps).Elem()
	for i := range from.NumField() {
		switch f := from.Field(i).Interface().(type) {
		case *fileDuration:
			if f != nil {
				d := time.Duration(*f)
				to.Field(i).Set(reflect.ValueOf(&d))
			}
		default:
			to.Field(i).Set(from.Field(i))
		}
	}
	return ps
}

// fileDuration is a duration in a config file: a duration string ("5s"),
// or a bare number of seconds (30, 1.5).
type fileDuration time.Duration

func (d *fileDuration) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		p, err := time.ParseDuration(x)
		if err != nil {
			return err
		}
		*d = fileDuration(p)
	case int64:
		if x < 0 || float64(x) > maxSeconds {
			return fmt.Errorf("%d: want seconds from 0 to %.0f, or a duration such as \"5s\"", x, maxSeconds)
		}
		*d = fileDuration(time.Duration(x) * time.Second)
	case float64:
		if !(x >= 0 && x <= maxSeconds) {
			return fmt.Errorf("%g: want seconds from 0 to %.0f, or a duration such as \"5s\"", x, maxSeconds)
		}
		*d = fileDuration(time.Duration(x * float64(time.Second)))
	default:
		return fmt.Errorf("%v: want seconds or a duration such as \"5s\"", v)
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
