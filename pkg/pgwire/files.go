package pgwire

import (
	"crypto/tls"
	"fmt"
	"os"
)

// LoadUserList reads a pgbouncer-style userlist file (ReadUserList) by
// path, for servers configured with an auth file.
func LoadUserList(path string) (map[string]Credential, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("auth file: %w", err)
	}
	defer f.Close()
	u, err := ReadUserList(f, path)
	if err != nil {
		return nil, fmt.Errorf("auth file: %w", err)
	}
	return u, nil
}

// LoadTLS reads a PEM certificate and key into the server TLS settings
// every tool uses (TLS 1.2 or newer).
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
