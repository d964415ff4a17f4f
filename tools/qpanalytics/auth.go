package main

import (
	"fmt"

	"github.com/qpkit/qpkit/pkg/pgwire"
)

// serverAuth builds the wire server's authentication from an auth file
// (pgbouncer userlist format; none: trust) and an optional TLS key pair.
func serverAuth(authFile, certFile, keyFile string, requireTLS bool) (*pgwire.ServerConfig, error) {
	cfg := &pgwire.ServerConfig{RequireTLS: requireTLS}
	cfg.Credentials = func(string, string) (pgwire.Credential, error) {
		return pgwire.Credential{Method: pgwire.AuthTrust}, nil
	}
	if authFile != "" {
		users, err := pgwire.LoadUserList(authFile)
		if err != nil {
			return nil, err
		}
		cfg.Credentials = func(user, _ string) (pgwire.Credential, error) {
			c, ok := users[user]
			if !ok {
				return pgwire.Credential{}, pgwire.ErrUnknownUser
			}
			return c, nil
		}
	}
	if (certFile == "") != (keyFile == "") {
		return nil, fmt.Errorf("--tls-cert and --tls-key go together")
	}
	if certFile != "" {
		var err error
		if cfg.TLS, err = pgwire.LoadTLS(certFile, keyFile); err != nil {
			return nil, err
		}
	} else if requireTLS {
		return nil, fmt.Errorf("--require-tls needs --tls-cert and --tls-key")
	}
	return cfg, nil
}
