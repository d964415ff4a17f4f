package main

import (
	"crypto/tls"
	"fmt"
	"os"

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
		f, err := os.Open(authFile)
		if err != nil {
			return nil, fmt.Errorf("auth file: %w", err)
		}
		users, err := pgwire.ReadUserList(f, authFile)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("auth file: %w", err)
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
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("tls: %w", err)
		}
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	} else if requireTLS {
		return nil, fmt.Errorf("--require-tls needs --tls-cert and --tls-key")
	}
	return cfg, nil
}
