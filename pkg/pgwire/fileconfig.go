package pgwire

import "errors"

// FileConfig is a fixed server configuration from files: a pgbouncer-style
// auth file (""; trust every client) and an optional PEM key pair. Servers
// that reload their users (qprouter) build their own Credentials instead.
func FileConfig(authFile, certFile, keyFile string, requireTLS bool) (*ServerConfig, error) {
	cfg := &ServerConfig{RequireTLS: requireTLS}
	cfg.Credentials = func(string, string) (Credential, error) {
		return Credential{Method: AuthTrust}, nil
	}
	if authFile != "" {
		users, err := LoadUserList(authFile)
		if err != nil {
			return nil, err
		}
		cfg.Credentials = func(user, _ string) (Credential, error) {
			c, ok := users[user]
			if !ok {
				return Credential{}, ErrUnknownUser
			}
			return c, nil
		}
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("a TLS certificate and key go together")
	}
	if certFile != "" {
		var err error
		if cfg.TLS, err = LoadTLS(certFile, keyFile); err != nil {
			return nil, err
		}
	} else if requireTLS {
		return nil, errors.New("requiring TLS needs a certificate and key")
	}
	return cfg, nil
}
