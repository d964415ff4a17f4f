// The pool the executor expects: session settings that make reads safe and the serializer's input predictable.

package pgexec

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// sessionParams are sent in every connection's startup packet, so they are
// the session's defaults (RESET and ROLLBACK return to them).
var sessionParams = map[string]string{
	// Defense in depth: even a statement that somehow ran outside the
	// envelope's BEGIN READ ONLY would start a read-only transaction.
	"default_transaction_read_only": "on",
	// A connection stuck inside a transaction is ended by the server.
	"idle_in_transaction_session_timeout": "60000",
	// The serializer converts these text forms; other styles fall back to
	// plain JSON strings.
	"DateStyle":          "ISO, MDY",
	"IntervalStyle":      "postgres",
	"bytea_output":       "hex",
	"extra_float_digits": "1",
	// The validator reads string literals as PostgreSQL does with these
	// (safesql): with standard_conforming_strings off a backslash escapes
	// a quote, and in a client-only encoding such as SJIS a backslash can
	// be the second byte of a character. Either would let the server see
	// a call where the validator saw a literal, whatever a database or
	// role sets as its default.
	"standard_conforming_strings": "on",
	"backslash_quote":             "off",
	"client_encoding":             "UTF8",
}

// ConfigurePool applies the executor's session settings to a pool config:
// default_transaction_read_only=on and the output styles the serializer
// reads. NewPool calls it; use it when building a pool config yourself.
func ConfigurePool(cfg *pgxpool.Config) {
	rp := cfg.ConnConfig.RuntimeParams
	if rp == nil {
		rp = map[string]string{}
		cfg.ConnConfig.RuntimeParams = rp
	}
	for k, v := range sessionParams {
		rp[k] = v
	}
	if rp["application_name"] == "" {
		rp["application_name"] = "pgexec"
	}
}

// NewPool opens a pool for the executor on url with at most maxConns
// connections (0 keeps pgxpool's default) and checks that the server
// answers.
func NewPool(ctx context.Context, url string, maxConns int) (*pgxpool.Pool, error) {
	if maxConns < 0 {
		return nil, fmt.Errorf("pgexec: maxConns %d is negative", maxConns)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgexec: parse database URL: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = int32(maxConns)
	}
	ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgexec: open pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgexec: connect: %w", err)
	}
	return pool, nil
}
